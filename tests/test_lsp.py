"""``gradcheck lsp`` driven by a real LSP client (pytest-lsp) over the server's stdio: the
diagnostic at the argmin line of examples/dqn_broken.py, its quick fix, cleared after the
fix, ``# noqa`` and ``[tool.gradcheck]`` honoured, each change read as ``gradcheck --static``
reads the same text, a clean shutdown with exit 0; the buffer's reused tree
(``static.incremental``) against ``ast.parse`` after random edits of real programs."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from gradcheck.lsp.document import Edit, edits_of
from gradcheck.static import _parse as static_parse
from gradcheck.static import check_text
from gradcheck.static.incremental import Buffer

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
    await asyncio.sleep(0.5)  # the half-typed text is read meanwhile (a change after it is read after it)
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


# --- a change re-reads the buffer exactly -------------------------------------------------

TWO_STEPS = """\
import tensorflow as tf
from tensorflow.math import argmax as pick

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam()


def train_policy(x, y):
    with tf.GradientTape() as tape:
        q = model(x)
        loss = tf.reduce_mean(tf.cast(pick(q, axis=1), tf.float32) - y)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def train_value(x, y):
    with tf.GradientTape() as tape:
        v = model(x)
        loss = tf.reduce_mean(tf.square(v - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _cli_diagnostics(path: Path, text: str) -> list[tuple]:
    """What ``gradcheck --static --format json`` reports for ``text`` saved at ``path``, as
    the server would publish it (0-based range, the message and its fix)."""
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [*SERVER[:-1], "--static", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode in (0, 1), proc.stderr
    [result] = json.loads(proc.stdout)["files"]
    out = []
    for f in result["findings"]:
        message = f["message"] + (f"\nFix: {f['fix']}" if f["fix"] else "")
        out.append((f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1, message))
    return out


def _published(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return [
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.message)
        for d in diagnostics
    ]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


def _replace_line(client: LanguageClient, uri: str, version: int, text: str, old: str, new: str) -> str:
    """Send the edit of one line (an incremental change, as an editor sends a keystroke's)."""
    line = _line_of(text, old)
    start = text.splitlines()[line].index(old)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, start), types.Position(line, start + len(old))), text=new
                )
            ],
        )
    )
    return text.replace(old, new, 1)


@pytest.mark.asyncio
async def test_each_change_is_read_as_the_command_line_reads_the_text(client: LanguageClient, tmp_path: Path):
    """The server keeps the tree of the last text (``static.incremental.Buffer``) and reads a
    change at once: what it publishes after each edit is what ``gradcheck --static`` says of
    the same text, whether the edit is in the function that holds the finding, in another
    one, or in a module-level name a function reads."""
    uri = _open(client, tmp_path / "steps.py", TWO_STEPS)
    text = TWO_STEPS
    opened = _published(await _diagnostics(client, uri))
    assert [(d[0], d[1]) for d in opened] == [("GC101", _line_of(text, "pick(q"))]
    assert opened == _cli_diagnostics(tmp_path / "cli.py", text)

    # an edit in the other function gives it a finding of its own; the first one stands
    text = _replace_line(client, uri, 2, text, "tf.square(v - y)", "tf.round(v) - y")
    both = _published(await _diagnostics(client, uri))
    assert [(d[0], d[1]) for d in both] == [
        ("GC101", _line_of(text, "pick(q")),
        ("GC102", _line_of(text, "tf.round(v)")),
    ]
    assert both == _cli_diagnostics(tmp_path / "cli.py", text)

    # an edit of a module-level name (the import that binds ``pick``): the finding of the
    # function that reads it goes, though no line of that function changed
    text = _replace_line(client, uri, 3, text, "argmax as pick", "reduce_max as pick")
    after = _published(await _diagnostics(client, uri))
    assert [(d[0], d[1]) for d in after] == [("GC102", _line_of(text, "tf.round(v)"))]
    assert after == _cli_diagnostics(tmp_path / "cli.py", text)

    # and back: the import binds argmax again, the finding in train_policy returns
    text = _replace_line(client, uri, 4, text, "reduce_max as pick", "argmax as pick")
    assert _published(await _diagnostics(client, uri)) == both

    # an edit in the function that holds the finding fixes it
    text = _replace_line(client, uri, 5, text, "tf.cast(pick(q, axis=1), tf.float32)", "tf.reduce_max(q, axis=1)")
    fixed = _published(await _diagnostics(client, uri))
    assert [d[0] for d in fixed] == ["GC102"]
    assert fixed == _cli_diagnostics(tmp_path / "cli.py", text)


@pytest.mark.asyncio
async def test_a_burst_of_changes_ends_on_the_diagnostics_of_its_last_text(client: LanguageClient, tmp_path: Path):
    """Changes that come while a read is under way are read together once it ends: the
    last diagnostics published are those of the last text, with its version, and no
    diagnostics of an older version come after those of a newer one."""
    uri = _open(client, tmp_path / "burst.py", BROKEN)
    assert [d.code for d in await _diagnostics(client, uri)] == ["GC101"]
    clean = BROKEN.replace("tf.math.argmin(y_pred, axis=1)", "y_pred")
    for version in range(2, 8):  # broken, clean, broken, ... clean: sent without waiting
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=clean if version % 2 else BROKEN)],
            )
        )
    versions = []
    while not versions or versions[-1] != 7:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        versions.append(params.version)
        expected = [] if params.version % 2 else ["GC101"]
        assert [d.code for d in params.diagnostics] == expected
    assert versions == sorted(versions)
    assert list(client.diagnostics[uri]) == []


#: Lines a user types: some continue the statement before them, some leave one open.
TYPED = [
    *("    x = 1\n", "else:\n", "\n", "# note\n", "y = (\n", "@dec\n", "def g():\n", "    return 2\n"),
    *("z = 3; w = 4\n", "if a:\n", "'''\n", "x = 1 \\\n", "class K:\n    pass\n", ")\n", "    else:\n"),
]


def _edits(text: str, rng: random.Random, count: int):
    """Edits a user makes: a line typed, deleted or changed by a character, anywhere."""
    for _ in range(count):
        lines = text.splitlines(keepends=True)
        at = rng.randrange(len(lines) + 1)
        kind = rng.random()
        if kind < 0.3 and lines:
            del lines[min(at, len(lines) - 1)]
        elif kind < 0.6 or not lines:
            lines.insert(at, rng.choice(TYPED))
        else:
            at = min(at, len(lines) - 1)
            column = rng.randrange(len(lines[at]) + 1)
            lines[at] = lines[at][:column] + rng.choice("a (:1#'\\)") + lines[at][column:]
        edited = "".join(lines)
        yield edited
        if rng.random() < 0.7 and _parses(edited):
            text = edited  # keep typing from there (else: the edit is undone)


def _parses(text: str) -> bool:
    return isinstance(static_parse(text, "<edit>"), ast.Module)


CORPUS = sorted((ROOT / "tests" / "realworld").rglob("*.py"))[::7] + sorted((ROOT / "examples").glob("*.py"))


def test_the_buffers_tree_is_the_tree_of_ast_parse_after_any_edit():
    """``Buffer.parse`` reuses the statements an edit left alone: after random edits of real
    programs (valid or not), its tree (positions included) or its message is the one
    ``ast.parse`` gives for the whole text, and many edits did reuse the old tree."""
    rng = random.Random(39)
    edits = reused = 0
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        if not _parses(text):
            continue
        buffer = Buffer()
        buffer.parse(text, str(path))
        for edited in _edits(text, rng, 12):
            got, want = buffer.parse(edited, str(path)), static_parse(edited, str(path))
            if isinstance(want, ast.Module):
                assert isinstance(got, ast.Module), (path, got)
                assert ast.dump(got, include_attributes=True) == ast.dump(want, include_attributes=True), path
            else:
                assert got == want, path
            edits += 1
            reused += buffer.reparsed < edited.count("\n") + 1
    assert edits > 500 and reused > edits // 4


def test_the_buffers_findings_are_check_texts():
    """On the benchmark's 2,000-line file, edited in many places: ``Buffer.check`` finds what
    ``check_text`` finds, field for field."""
    from benchmarks.bench_lsp import training_file

    text = training_file(2000)
    buffer = Buffer()
    rng = random.Random(7)
    for edited in [text, *_edits(text, rng, 6), text.replace("tf.math.argmin(y_pred, axis=1)", "y_pred")]:
        got, want = buffer.check(edited, "lsp.py"), check_text(edited, "lsp.py")
        if isinstance(want, list):
            assert isinstance(got, list) and [f.to_json() for f in got] == [f.to_json() for f in want]
        else:
            assert got == want


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
