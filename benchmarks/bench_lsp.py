"""Diagnostic latency of ``gradcheck lsp`` on a 2,000-line training file: the time from a
``didChange`` sent by the client to the ``publishDiagnostics`` it receives, against
``ast.parse`` of the same text in this process (the floor any Python linter pays), timed
between the changes so both see the same load.

The file is examples/dqn_broken.py followed by the real-world correct twins
(tests/realworld/clean/*.py), each as the body of a function of its own, until it has
2,000 lines: one module with many training loops and one GC101. Each change adds a line
(a comment) far from the bug, as typing does, after a pause; the server reads the text and
publishes. The client is a few lines of JSON-RPC over the server's stdio, so the figure is
the server's. ``--baseline REV`` also times the server of a git revision (its ``gradcheck``
package, extracted to a temporary directory) in the same run: both servers have the file
open, and each change goes to one, then the other. Then, in this process, the same edits
are timed through ``check_text`` (the full check) and ``Buffer.check`` (the server's: the
previous tree reused, ``gradcheck/static/incremental.py``).

    python benchmarks/bench_lsp.py [--lines 2000] [--changes 30] [--baseline REV] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._common import machine, median  # noqa: E402


def training_file(lines: int) -> str:
    parts = [(ROOT / "examples" / "dqn_broken.py").read_text(encoding="utf-8")]
    total = parts[0].count("\n")
    for k, twin in enumerate(sorted((ROOT / "tests" / "realworld" / "clean").glob("*.py"))):
        body = twin.read_text(encoding="utf-8")
        try:
            ast.parse(body)
        except SyntaxError:
            continue
        block = f"\n\ndef program_{k}():\n" + textwrap.indent(body, "    ") + "\n"
        parts.append(block)
        total += block.count("\n")
        if total >= lines:
            break
    text = "".join(parts)
    return "".join(text.splitlines(keepends=True)[:lines]).rstrip() + "\n" if total > lines else text


class Client:
    """JSON-RPC over the server's stdin/stdout."""

    def __init__(self, command: list[str], env: dict | None = None, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, request: bool = False) -> int | None:
        message: dict = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return message.get("id")

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def wait(self, method: str | None = None, id: int | None = None) -> dict:
        while True:
            message = self.receive()
            if (method and message.get("method") == method) or (id is not None and message.get("id") == id):
                return message


class Session:
    """One server (``python -m gradcheck lsp`` run from the directory holding ``package``)
    with the training file open."""

    def __init__(self, text: str, package: Path) -> None:
        self.uri = (ROOT / "benchmarks" / "results" / "lsp_2000_lines.py").as_uri()  # never written
        # run from that directory: ``-m`` puts the working directory first on sys.path
        env = {**os.environ, "PYTHONPATH": str(package.parent)}
        self.client = Client([sys.executable, "-m", "gradcheck", "lsp"], env, cwd=package.parent)
        self.client.wait(id=self.client.send("initialize", {"processId": None, "capabilities": {}}, request=True))
        self.client.send("initialized")
        self.far = text.count("\n") - 1  # the last line: far from the bug at the top
        self.latencies: list[float] = []
        start = time.perf_counter()
        self.client.send(
            "textDocument/didOpen",
            {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}},
        )
        opened = self.client.wait("textDocument/publishDiagnostics")
        self.open_s = time.perf_counter() - start
        self.codes = [d["code"] for d in opened["params"]["diagnostics"]]

    def change(self, version: int) -> None:
        """Add a comment line above the last line; time it to the diagnostics."""
        edit = {
            "range": {"start": {"line": self.far, "character": 0}, "end": {"line": self.far, "character": 0}},
            "text": f"# edit {version}\n",
        }
        start = time.perf_counter()
        self.client.send(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": version}, "contentChanges": [edit]},
        )
        published = self.client.wait("textDocument/publishDiagnostics")
        self.latencies.append(time.perf_counter() - start)
        assert [d["code"] for d in published["params"]["diagnostics"]] == self.codes

    def close(self) -> dict:
        self.client.wait(id=self.client.send("shutdown", request=True))
        self.client.send("exit")
        self.client.proc.wait(timeout=30)
        return {
            "diagnostics": self.codes,
            "open_ms": round(self.open_s * 1000, 1),
            "change_ms_median": round(median(self.latencies) * 1000, 1),
            "change_ms_max": round(max(self.latencies) * 1000, 1),
            "exit_code": self.client.proc.returncode,
        }


def in_process(text: str, changes: int) -> dict:
    """The same edits in this process: ``ast.parse``, the full check (``check_text``) and
    the server's (``Buffer.check``, which reuses the previous tree), in turns."""
    from gradcheck.static import check_text
    from gradcheck.static.incremental import Buffer

    buffer = Buffer()
    buffer.check(text, "lsp.py")
    times: dict[str, list[float]] = {"ast_parse": [], "check_text": [], "buffer_check": []}
    lines = text.splitlines(keepends=True)
    for version in range(2, changes + 2):
        lines.insert(len(lines) - 1, f"# edit {version}\n")
        edited = "".join(lines)
        for name, fn, args in (
            ("ast_parse", ast.parse, (edited,)),
            ("check_text", check_text, (edited, "lsp.py")),
            ("buffer_check", buffer.check, (edited, "lsp.py")),
        ):
            t0 = time.perf_counter()
            fn(*args)
            times[name].append(time.perf_counter() - t0)
    return {f"{name}_ms_median": round(median(spread) * 1000, 1) for name, spread in times.items()}


def extract(rev: str, into: Path) -> Path:
    """The ``gradcheck`` package as of git revision ``rev``, written under ``into``."""
    archive = subprocess.run(["git", "archive", rev, "gradcheck"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "gradcheck"


def run(lines: int, changes: int, baseline: str | None = None) -> dict:
    """Both servers open the file; each change goes to one, then the other, after a pause
    (each change is measured on its own, and both see the machine's load alike)."""
    text = training_file(lines)
    result: dict = {"machine": machine(), "lines": text.count("\n"), "changes": changes}
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as tmp:
        sessions = {"server": Session(text, ROOT / "gradcheck")}
        if baseline:
            sessions["baseline"] = Session(text, extract(baseline, Path(tmp)))
        parses = []
        for version in range(2, changes + 2):
            for session in sessions.values():
                time.sleep(0.1)
                session.change(version)
            t0 = time.perf_counter()  # the floor, timed between the changes: the same load
            ast.parse(text)
            parses.append(time.perf_counter() - t0)
        for key, session in sessions.items():
            result[key] = session.close()
    if baseline:
        result["baseline"]["rev"] = baseline
    parse = round(median(parses) * 1000, 1)
    result["ast_parse_ms_median"] = parse
    for key in ("baseline", "server"):
        if key in result:
            result[key]["change_over_ast_parse"] = round(result[key]["change_ms_median"] / parse, 2)
    result["in_process"] = in_process(text, changes)
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--changes", type=int, default=30)
    ap.add_argument("--baseline", metavar="REV", help="also time the server of this git revision, in the same run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.lines, args.changes, args.baseline)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    parse = result["ast_parse_ms_median"]
    for key in ("baseline", "server"):
        if key in result:
            r = result[key]
            name = f"baseline {r['rev']}" if key == "baseline" else "this server"
            print(
                f"{name}: diagnostics {r['diagnostics']}; open -> diagnostics {r['open_ms']} ms; change -> "
                f"diagnostics median {r['change_ms_median']} ms (max {r['change_ms_max']}), "
                f"{r['change_over_ast_parse']}x ast.parse"
            )
    p = result["in_process"]
    print(
        f"{result['lines']} lines: ast.parse {parse} ms between the changes; in process: ast.parse "
        f"{p['ast_parse_ms_median']} ms, check_text {p['check_text_ms_median']} ms, Buffer.check "
        f"{p['buffer_check_ms_median']} ms; load at start {result['machine']['load_average_at_start']}"
    )


if __name__ == "__main__":
    main()
