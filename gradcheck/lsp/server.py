"""``gradcheck lsp``: a Language Server Protocol server over stdio (pygls).

It runs the static engine on ``didOpen``, ``didChange`` and ``didSave``, and publishes each finding as a diagnostic (``code`` GCxxx, ``source`` "gradcheck", the rule's
severity, the message and its fix). Where ``gradcheck --static --diff`` has a verified
patch, the finding gets a quick-fix code action. ``# noqa`` and ``[tool.gradcheck]`` (the
nearest ``pyproject.toml`` above the file) are honoured as on the command line. Never
imports TensorFlow, never runs the user's code.

A change is read at once when no read of that document is under way; changes that come
while one is are read together, once it ends (a burst of keystrokes costs at most one read
more than its last keystroke). Reads run in a worker thread, so the server keeps taking
messages meanwhile, and each document keeps its :class:`~gradcheck.static.incremental.Buffer`
(the tree of its last text, reused where an edit left it alone).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gradcheck import links
from gradcheck._version import __version__
from gradcheck.config import Config, ConfigError
from gradcheck.findings import Finding
from gradcheck.lsp import document
from gradcheck.static.incremental import Buffer

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "note": types.DiagnosticSeverity.Information,
}
_log = logging.getLogger("gradcheck.lsp")


class GradcheckServer(LanguageServer):
    """The server: per open document its buffer, the read under way, and the last findings."""

    def __init__(self) -> None:
        super().__init__("gradcheck", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.buffers: dict[str, Buffer] = {}
        self.reading: dict[str, asyncio.Task] = {}  # the read under way, per document
        self.changed: set[str] = set()  # documents changed since their read under way began
        self.findings: dict[str, list[Finding]] = {}  # the last published, per document
        self.published: dict[str, int | None] = {}  # the version of the text they are of
        # one thread: reads and quick fixes run one at a time (the static engine and a
        # buffer are never used by two threads at once)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradcheck-read")

    def settings(self, path: str) -> Config:
        try:
            return document.settings_for(path)
        except ConfigError as error:
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"gradcheck: {error}"))
            return Config()

    def read(self, uri: str) -> None:
        """Check the document's current text and publish what is found: now if no read of it
        is under way, else once that read ends (while the text does not parse, the last
        diagnostics stand)."""
        if uri in self.reading:
            self.changed.add(uri)
            return
        self.reading[uri] = asyncio.get_running_loop().create_task(self._read(uri))

    async def _read(self, uri: str) -> None:
        try:
            while True:
                doc = self.workspace.get_text_document(uri)
                text, version, path = doc.source, doc.version, to_fs_path(uri) or uri
                buffer = self.buffers.setdefault(uri, Buffer())
                settings = self.settings(path)
                found = await asyncio.get_running_loop().run_in_executor(
                    self.worker, document.findings, text, path, settings, buffer
                )
                if uri in self.changed:  # what was read is already old: read the text as it is now
                    self.changed.discard(uri)
                    continue
                if uri not in self.buffers:  # closed meanwhile (and not opened again)
                    return
                break
        finally:
            self.reading.pop(uri, None)
        if found is None:
            return
        self.findings[uri] = found
        self.published[uri] = version
        diagnostics = [diagnostic(f) for f in found]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    async def settle(self) -> None:
        """Wait for the reads under way (and those they start again) to publish."""
        while self.reading:
            await asyncio.gather(*self.reading.values(), return_exceptions=True)

    def forget(self, uri: str) -> None:
        self.buffers.pop(uri, None)
        self.changed.discard(uri)
        self.findings.pop(uri, None)
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def diagnostic(finding: Finding) -> types.Diagnostic:
    """A finding as the editor shows it (LSP positions are 0-based)."""
    line = max(finding.line - 1, 0)
    column = max(finding.column - 1, 0)
    end_line = max((finding.end_line or finding.line) - 1, line)
    end_column = finding.end_column - 1 if finding.end_column else column + 1
    if end_line == line and end_column <= column:
        end_column = column + 1
    message = finding.message + (f"\nFix: {finding.fix}" if finding.fix else "")
    url = links.rule_url(finding.code)
    return types.Diagnostic(
        range=types.Range(types.Position(line, column), types.Position(end_line, end_column)),
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source="gradcheck",
    )


def build() -> GradcheckServer:
    server = GradcheckServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GradcheckServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.read(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GradcheckServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.read(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: GradcheckServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.read(params.text_document.uri)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: GradcheckServer, *args) -> None:
        # what was read is published before the server says it is done
        await ls.settle()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GradcheckServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: GradcheckServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        asked = [d for d in params.context.diagnostics if d.source == "gradcheck"]
        doc = ls.workspace.get_text_document(uri)
        if ls.published.get(uri) != doc.version:
            return []  # the findings are of an older text: the fixes come with the next diagnostics
        found = ls.findings.get(uri, [])
        wanted = {(d.code, d.range.start.line + 1) for d in asked}
        chosen = [f for f in found if (f.code, f.line) in wanted]
        if not chosen:
            return []
        path = to_fs_path(uri) or uri
        actions = []
        fixes = await asyncio.get_running_loop().run_in_executor(
            ls.worker, document.quick_fixes, doc.source, path, chosen, ls.settings(path)
        )
        for fix in fixes:
            edits = [
                types.TextEdit(types.Range(types.Position(e.start, 0), types.Position(e.end, 0)), e.text)
                for e in fix.edits
            ]
            actions.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[d for d in asked if (d.code, d.range.start.line + 1) == (fix.code, fix.line)],
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=True,
                )
            )
        return actions

    return server


def main(argv: list[str]) -> int:
    """``gradcheck lsp [--stdio]``: serve over stdin/stdout until the client says exit."""
    extra = [a for a in argv if a != "--stdio"]
    if extra:
        if extra[0] in ("-h", "--help"):
            print(
                "usage: gradcheck lsp [--stdio]\n\nA language server (LSP) over stdio: the static engine's findings as"
            )
            print("diagnostics while you type, and its verified patches as quick fixes. See docs/editors.md.")
            return 0
        print(f"gradcheck lsp: unknown argument {extra[0]!r} (usage: gradcheck lsp [--stdio])", file=sys.stderr)
        return 2
    build().start_io()
    return 0
