"""Diagnostic latency of ``gradcheck lsp`` on a 2,000-line training file: the time from a
``didChange`` sent by the client to the ``publishDiagnostics`` it receives, against
``ast.parse`` of the same text in this process (the floor any Python linter pays), both
measured in the same run.

The file is examples/dqn_broken.py followed by the real-world correct twins
(tests/realworld/clean/*.py), each as the body of a function of its own, until it has
2,000 lines: one module with many training loops and one GC101. Each change edits one line
far from the bug (a comment), as typing does; the server waits out its debounce
(``gradcheck.lsp.server.DEBOUNCE``), reads the text and publishes. The client is a few lines
of JSON-RPC over the server's stdio, so the figure is the server's.

    python benchmarks/bench_lsp.py [--lines 2000] [--changes 30] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
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

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
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


def run(lines: int, changes: int) -> dict:
    text = training_file(lines)
    path = ROOT / "benchmarks" / "results" / "lsp_2000_lines.py"  # never written: the buffer lives in the client
    uri = path.as_uri()
    client = Client([sys.executable, "-m", "gradcheck", "lsp"])
    client.wait(id=client.send("initialize", {"processId": None, "capabilities": {}}, request=True))
    client.send("initialized")
    start = time.perf_counter()
    client.send(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    opened = client.wait("textDocument/publishDiagnostics")
    first = time.perf_counter() - start
    codes = [d["code"] for d in opened["params"]["diagnostics"]]
    latencies = []
    far = text.count("\n") - 1  # the last line: far from the bug at the top
    for version in range(2, changes + 2):
        change = {
            "range": {"start": {"line": far, "character": 0}, "end": {"line": far, "character": 0}},
            "text": f"# edit {version}\n",
        }
        start = time.perf_counter()
        client.send(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        published = client.wait("textDocument/publishDiagnostics")
        latencies.append(time.perf_counter() - start)
        assert [d["code"] for d in published["params"]["diagnostics"]] == codes
    client.wait(id=client.send("shutdown", request=True))
    client.send("exit")
    client.proc.wait(timeout=30)
    parse = []
    for _ in range(changes):
        t0 = time.perf_counter()
        ast.parse(text)
        parse.append(time.perf_counter() - t0)
    from gradcheck.lsp.server import DEBOUNCE

    return {
        "machine": machine(),
        "lines": text.count("\n"),
        "diagnostics": codes,
        "open_ms": round(first * 1000, 1),
        "change_ms_median": round(median(latencies) * 1000, 1),
        "change_ms_max": round(max(latencies) * 1000, 1),
        "debounce_ms": DEBOUNCE * 1000,
        "ast_parse_ms_median": round(median(parse) * 1000, 1),
        "exit_code": client.proc.returncode,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--changes", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.lines, args.changes)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['lines']} lines, diagnostics {result['diagnostics']}: open -> diagnostics {result['open_ms']} ms; "
        f"change -> diagnostics median {result['change_ms_median']} ms (max {result['change_ms_max']}; "
        f"debounce {result['debounce_ms']:.0f} ms); ast.parse {result['ast_parse_ms_median']} ms"
    )


if __name__ == "__main__":
    main()
