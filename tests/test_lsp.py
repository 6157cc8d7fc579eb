"""``gradcheck lsp`` driven by a real LSP client (pytest-lsp) over the server's stdio: the
diagnostic at the argmin line of examples/dqn_broken.py, its quick fix, cleared after the
fix, ``# noqa`` and ``[tool.gradcheck]`` honoured, a clean shutdown with exit 0."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from gradcheck.lsp.document import Edit, edits_of

ROOT = Path(__file__).resolve().parents[1]
BROKEN = (ROOT / "examples" / "dqn_broken.py").read_text(encoding="utf-8")
ARGMIN_LINE = next(i for i, line in enumerate(BROKEN.splitlines()) if "tf.math.argmin" in line)  # 0-based

SERVER = [sys.executable, "-m", "gradcheck", "lsp"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri())
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    return uri


async def _diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """Line-wise text edits (the server's quick fixes replace whole lines)."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        assert edit.range.start.character == 0 and edit.range.end.character == 0
        lines[edit.range.start.line : edit.range.end.line] = [edit.new_text]
    return "".join(lines)


@pytest.mark.asyncio
async def test_open_fix_clear(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "dqn_broken.py"
    path.write_text(BROKEN, encoding="utf-8")
    uri = _open(client, path, BROKEN)
    [diag] = await _diagnostics(client, uri)
    assert (diag.code, diag.source, diag.severity) == ("GC101", "gradcheck", types.DiagnosticSeverity.Error)
    assert diag.range.start.line == ARGMIN_LINE
    assert BROKEN.splitlines()[ARGMIN_LINE][diag.range.start.character :].startswith("tf.math.argmin")
    assert "argmin" in diag.message and "\nFix: " in diag.message

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    [action] = actions
    assert action.kind == types.CodeActionKind.QuickFix and action.title.startswith("gradcheck: ")
    fixed = _apply(BROKEN, action.edit.changes[uri])
    assert fixed != BROKEN

    # the editor applies the fix (one incremental change of the argmin line): cleared
    [edit] = action.edit.changes[uri]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)],
        )
    )
    assert await _diagnostics(client, uri) == []

    # typing the bug back in: reported again, once the burst of changes is over
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=BROKEN)],
        )
    )
    [again] = await _diagnostics(client, uri)
    assert (again.code, again.range.start.line) == ("GC101", ARGMIN_LINE)

    # closing the document clears what it showed
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert await _diagnostics(client, uri) == []


@pytest.mark.asyncio
async def test_noqa_and_pyproject_are_honoured(client: LanguageClient, tmp_path: Path):
    lines = BROKEN.splitlines(keepends=True)
    lines[ARGMIN_LINE] = lines[ARGMIN_LINE].rstrip("\n") + "  # noqa: GC101\n"
    noqa = tmp_path / "noqa.py"
    uri = _open(client, noqa, "".join(lines))
    assert await _diagnostics(client, uri) == []

    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.gradcheck]\nignore = ["GC101"]\n', encoding="utf-8")
    uri = _open(client, project / "train.py", BROKEN)
    assert await _diagnostics(client, uri) == []

    # the same text outside that project is reported
    uri = _open(client, tmp_path / "train.py", BROKEN)
    assert [d.code for d in await _diagnostics(client, uri)] == ["GC101"]


@pytest.mark.asyncio
async def test_a_buffer_that_does_not_parse_keeps_the_last_diagnostics(client: LanguageClient, tmp_path: Path):
    uri = _open(client, tmp_path / "typing.py", BROKEN)
    [diag] = await _diagnostics(client, uri)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=BROKEN + "\ndef (\n")],
        )
    )
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await asyncio.sleep(0.5)  # past the debounce
    # a round trip: the server has handled the change and the save by now
    await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    # nothing was published for the half-typed text: the GC101 still shows
    assert [(d.code, d.range.start.line) for d in client.diagnostics[uri]] == [("GC101", ARGMIN_LINE)]
    clean = BROKEN.replace("tf.math.argmin(y_pred, axis=1)", "y_pred")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=clean)],
        )
    )
    assert await _diagnostics(client, uri) == []
    assert diag.code == "GC101"


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_shutdown_and_exit_end_the_server_with_0_and_no_tensorflow():
    """A client speaking JSON-RPC over the server's stdio by hand: initialize, open, shutdown
    and, once it is answered, exit; what was read is published before the answer, the
    process ends with 0, and it never imported TensorFlow."""
    probe = (
        "import runpy, sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('tensorflow loaded: %s\\n' % ('tensorflow' in sys.modules)))\n"
        "sys.argv = ['gradcheck', 'lsp']\n"
        "runpy.run_module('gradcheck', run_name='__main__')\n"
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": (ROOT / "examples" / "dqn_broken.py").as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": BROKEN,
                }
            },
        },
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", probe],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        proc.stdin.write(b"".join(_message(m) for m in messages))
        proc.stdin.flush()
        received = []
        while not received or received[-1].get("id") != 2:
            received.append(_receive(proc.stdout))
        proc.stdin.write(_message({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    finally:
        proc.kill()
    published = [m for m in received if m.get("method") == "textDocument/publishDiagnostics"]
    assert [d["code"] for m in published for d in m["params"]["diagnostics"]] == ["GC101"]
    assert "tensorflow loaded: False" in proc.stderr.read().decode()


def _receive(stream) -> dict:
    """One JSON-RPC message from the server's stdout."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    assert length, "the server closed its output"
    return json.loads(stream.read(length))


def test_unknown_argument_is_one_line_and_exit_2():
    proc = subprocess.run([*SERVER, "--tcp"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "gradcheck lsp: unknown argument '--tcp' (usage: gradcheck lsp [--stdio])"
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb\nc\n", "a\nc\n"),
        ("a\nb\nc\n", "a\nb\nx\ny\nc\n"),
        ("a\nb", "a\nc"),  # no final newline on either side
        ("a\nb\n", "a\nb"),
        ("", "x\n"),
    ],
)
def test_edits_of_a_diff_rebuild_the_new_text(old: str, new: str):
    from gradcheck.fix.patch import unified_diff

    edits = edits_of(unified_diff(old, new, "f.py"))
    lines = old.splitlines(keepends=True)
    for e in reversed(edits):
        assert isinstance(e, Edit)
        lines[e.start : e.end] = [e.text]
    assert "".join(lines) == new
