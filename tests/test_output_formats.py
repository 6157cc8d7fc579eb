"""Every ``--format`` on real results and on hand-built reports with awkward text.

Real results come from running the CLI on ``examples/dqn_broken.py`` (one GC101 finding) and
on clean scripts (``examples/dqn_fixed.py`` and a real-world control). Each TensorFlow run costs ~5 s, so all of them start together once per
module (``cli``) and the other formats are rendered in-process from the JSON run's report.
Checks: JSON against ``gradcheck/schema/report-v1.json``, SARIF against the official SARIF
2.1.0 schema (``tests/data``), GitHub lines against the workflow-command grammar with the
escaping round-tripped, exit codes, the stderr summary, and no colour codes in piped output.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote, unquote

import jsonschema
import pytest

import gradcheck
from gradcheck import links
from gradcheck.cli import FORMAT_CHOICES
from gradcheck.findings import TIMEOUT, ChainLink, CheckError, FileResult, Finding
from gradcheck.output import FORMATS, github, render
from gradcheck.output.github import escape_data, escape_property
from gradcheck.output.sarif import SRCROOT, sarif_log
from gradcheck.report import Report
from gradcheck.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
BROKEN = "examples/dqn_broken.py"
FIXED = "examples/dqn_fixed.py"
CLEAN = "tests/realworld/clean/106_subclass_layers_chained.py"
MISSING = "no/such/script.py"
ANSI = re.compile(r"\x1b\[")

# The culprit in dqn_broken.py, read from the example so an edit above it moves the expectation.
_BROKEN_LINES = (ROOT / BROKEN).read_text(encoding="utf-8").splitlines()
CULPRIT = "tf.math.argmin(y_pred, axis=1)"
CULPRIT_LINE = next(n for n, text in enumerate(_BROKEN_LINES, start=1) if CULPRIT in text)
CULPRIT_COL = _BROKEN_LINES[CULPRIT_LINE - 1].index(CULPRIT) + 1
CULPRIT_END_COL = CULPRIT_COL + len(CULPRIT)
VARIABLES = [
    "q_network/hidden/bias",
    "q_network/hidden/kernel",
    "q_network/q_values/bias",
    "q_network/q_values/kernel",
]

# Each run starts TensorFlow in a child process; keep this list short.
CLI_RUNS: dict[str, list[str]] = {
    "json": ["--format", "json", BROKEN],
    "full": ["--format", "full", BROKEN],
    "concise": ["--format", "concise", BROKEN],
    "sarif": ["--format", "sarif", BROKEN],
    "github": ["--format", "github", BROKEN],
    "exit-zero": ["--format", "concise", "--exit-zero", BROKEN],
    "clean": ["--format", "json", CLEAN, FIXED],
}


_SPAWN = threading.Lock()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    # stdout and stderr are pipes, not a terminal: the CLI must not colour them.
    cmd = [sys.executable, "-m", "gradcheck", *args]
    # Started one at a time, run in parallel: forking this process (TensorFlow loaded,
    # many threads) from several threads at once once failed exec with EFAULT in CI.
    with _SPAWN:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8"
        )
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def cli():
    """``cli(name)``: the finished CLI run ``CLI_RUNS[name]`` (all started at once)."""
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1))
    futures = {name: pool.submit(run_cli, *args) for name, args in CLI_RUNS.items()}
    yield lambda name: futures[name].result()
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def broken_report(cli) -> Report:
    run = cli("json")
    assert run.returncode == 1, run.stderr
    return Report(files=[FileResult.from_json(f) for f in json.loads(run.stdout)["files"]])


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    # Renderers read source lines through paths relative to where the CLI ran.
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def report_schema() -> jsonschema.Validator:
    schema = json.loads((ROOT / "gradcheck" / "schema" / "report-v1.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def sarif_schema() -> jsonschema.Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)
    # The errata01 schema declares draft-04; validate by the draft the file declares.
    assert validator is jsonschema.Draft4Validator
    validator.check_schema(schema)
    return validator(schema)


def assert_valid(validator: jsonschema.Validator, instance) -> None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


# -- GitHub workflow-command grammar ---------------------------------------------------------
# ::command key=value,key=value::data, on one line. In a property value the runner splits on
# "," and stops at "::", so both are escaped there; in data only %, CR and LF are.
COMMAND = re.compile(r"::(?P<command>[a-z-]+)(?: (?P<properties>[^:\r\n]+))?::(?P<data>[^\r\n]*)")
PROPERTY = re.compile(r"(?P<key>[A-Za-z]+)=(?P<value>(?:[^%,:\r\n]|%(?:25|0D|0A|3A|2C))*)")
COMMAND_DATA = re.compile(r"(?:[^%\r\n]|%(?:25|0D|0A))*")
ANNOTATION_KEYS = {"file", "line", "col", "endLine", "endColumn", "title"}
_UNESCAPE = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(text: str) -> str:
    return re.sub(r"%(?:25|0D|0A|3A|2C)", lambda m: _UNESCAPE[m.group()], text)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """(command, unescaped properties, unescaped data), failing on anything off-grammar."""
    match = COMMAND.fullmatch(line)
    assert match, f"not a workflow command: {line!r}"
    assert COMMAND_DATA.fullmatch(match["data"]), f"unescaped % in data: {line!r}"
    properties = {}
    for item in (match["properties"] or "").split(","):
        prop = PROPERTY.fullmatch(item)
        assert prop, f"bad property {item!r} in {line!r}"
        assert prop["key"] in ANNOTATION_KEYS and prop["key"] not in properties
        properties[prop["key"]] = unescape(prop["value"])
    return match["command"], properties, unescape(match["data"])


# -- real results: the CLI on dqn_broken.py ------------------------------------------------------
def test_every_cli_format_has_a_renderer():
    assert set(FORMATS) == set(FORMAT_CHOICES)


def test_json_run(cli, report_schema):
    run = cli("json")
    assert run.returncode == 1
    assert not ANSI.search(run.stdout + run.stderr)
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    data = json.loads(run.stdout)
    assert_valid(report_schema, data)
    assert data["summary"] == {"files": 1, "findings": 1, "errors": 0}
    (file,) = data["files"]
    assert (file["path"], file["status"], file["error"], file["steps_checked"]) == (BROKEN, "checked", None, 1)
    (finding,) = file["findings"]
    assert finding["code"] == "GC101"
    assert finding["name"] == "integer-index-op"
    assert finding["severity"] == "error"
    assert (finding["line"], finding["column"]) == (CULPRIT_LINE, CULPRIT_COL)
    assert (finding["end_line"], finding["end_column"]) == (CULPRIT_LINE, CULPRIT_END_COL)
    assert (finding["op"], finding["call"]) == ("ArgMin", "tf.math.argmin")
    assert finding["variables"] == VARIABLES
    assert finding.get("url") == links.rule_url("GC101")  # no published home: the installed docs
    cut = [link for link in finding["chain"] if link.get("cut")]
    assert cut == [{"op": "ArgMin", "line": CULPRIT_LINE, "cut": True}]


def test_json_rebuilt_report_renders_the_same(cli, broken_report):
    # from_json -> to_json loses nothing, so the in-process renders below see the real report.
    assert json.loads(render(broken_report, "json")) == json.loads(cli("json").stdout)


def test_full_run(cli, broken_report):
    run = cli("full")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    assert not ANSI.search(run.stdout)
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"{BROKEN}:{CULPRIT_LINE}:{CULPRIT_COL}: GC101 tf.math.argmin returns integer indices")
    assert f"{CULPRIT_LINE} | {_BROKEN_LINES[CULPRIT_LINE - 1]}" in lines
    caret = next(line for line in lines if "^" in line)
    assert caret.index("^") - caret.index("|") == CULPRIT_COL + 1  # "|", a space, then column - 1 spaces
    assert caret.count("^") == len(CULPRIT)
    assert any(line.strip().startswith("= variables: " + ", ".join(VARIABLES)) for line in lines)
    assert any(line.strip().startswith("= fix: ") for line in lines)
    assert run.stdout == render(broken_report, "full")
    # The check above can see colour: the same report rendered with colour has escape codes.
    assert ANSI.search(render(broken_report, "full", color=True))


def test_concise_run_one_line_per_finding(cli, broken_report):
    run = cli("concise")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    assert not ANSI.search(run.stdout)
    (line,) = run.stdout.splitlines()
    assert line == f"{BROKEN}:{CULPRIT_LINE}:{CULPRIT_COL}: GC101 {broken_report.findings[0].message}"
    assert run.stdout == render(broken_report, "concise")


def test_exit_zero_with_findings(cli):
    run = cli("exit-zero")
    assert run.returncode == 0
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    (line,) = run.stdout.splitlines()
    assert line.startswith(f"{BROKEN}:{CULPRIT_LINE}:{CULPRIT_COL}: GC101 ")


def test_sarif_run(cli, broken_report, sarif_schema):
    run = cli("sarif")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    assert not ANSI.search(run.stdout)
    log = json.loads(run.stdout)
    assert_valid(sarif_schema, log)
    assert log == sarif_log(broken_report)  # same cwd, same report: same log
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "gradcheck"
    assert driver["version"] == gradcheck.__version__
    assert driver.get("informationUri") == links.home()  # left out while no home is published

    (result,) = sarif_run["results"]
    assert result["ruleId"] == "GC101"
    assert driver["rules"][result["ruleIndex"]]["id"] == "GC101"
    assert result["level"] == "error"
    finding = broken_report.findings[0]
    text = result["message"]["text"]
    assert text.startswith(finding.message)
    assert f"Fix: {finding.fix}" in text
    assert "✂ ArgMin" in text
    (location,) = result["locations"]
    artifact = location["physicalLocation"]["artifactLocation"]
    assert (artifact["uri"], artifact["uriBaseId"]) == (BROKEN, SRCROOT)
    assert sarif_run["artifacts"][artifact["index"]]["location"]["uri"] == BROKEN
    assert location["physicalLocation"]["region"] == {
        "startLine": CULPRIT_LINE,
        "startColumn": CULPRIT_COL,
        "endLine": CULPRIT_LINE,
        "endColumn": CULPRIT_END_COL,
    }
    assert result["properties"]["variables"] == VARIABLES
    assert (result["properties"]["op"], result["properties"]["call"]) == ("ArgMin", "tf.math.argmin")
    (invocation,) = sarif_run["invocations"]
    assert invocation["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in invocation


def test_sarif_describes_every_rule():
    log = sarif_log(Report())
    driver = log["runs"][0]["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == sorted(RULES)
    for descriptor in driver["rules"]:
        rule = RULES[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["help"]["markdown"] == rule.explanation()
        assert descriptor["help"]["text"] == rule.explanation()
        assert descriptor.get("helpUri") == links.published_rule_url(rule.code)
        assert descriptor["defaultConfiguration"]["level"] == rule.severity
    levels = {d["id"]: d["defaultConfiguration"]["level"] for d in driver["rules"]}
    assert (levels["GC101"], levels["GC201"], levels["GC301"], levels["GC903"]) == (
        "error",
        "warning",
        "error",
        "error",
    )
    assert [d["id"] for d in driver["notifications"]] == ["GC901", "GC902", "GC903", "GC904", "GC905"]
    assert log["runs"][0]["results"] == []


def test_github_run(cli, broken_report):
    run = cli("github")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "1 finding in 1 file"
    assert not ANSI.search(run.stdout)
    (line,) = run.stdout.splitlines()
    command, properties, data = parse_command(line)
    assert command == "error"
    assert properties == {
        "file": BROKEN,
        "line": str(CULPRIT_LINE),
        "col": str(CULPRIT_COL),
        "endLine": str(CULPRIT_LINE),
        "endColumn": str(CULPRIT_END_COL),
        "title": "GC101 integer-index-op",
    }
    finding = broken_report.findings[0]
    assert data == f"{finding.message}\n\nFix: {finding.fix}\n\nSee {github.see('GC101')}"
    assert run.stdout == render(broken_report, "github")


@pytest.mark.parametrize("fmt", FORMAT_CHOICES)
def test_clean_scripts(fmt, cli, report_schema, sarif_schema):
    # dqn_fixed.py and a clean real-world script: exit 0, and every format says so.
    run = cli("clean")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr.strip().splitlines()[-1] == "No findings in 2 checked files"
    report = Report(files=[FileResult.from_json(f) for f in json.loads(run.stdout)["files"]])
    assert [(r.path, r.status, r.steps_checked >= 1) for r in report.files] == [
        (CLEAN, "checked", True),
        (FIXED, "checked", True),
    ]
    output = render(report, fmt)
    if fmt in ("full", "concise", "github"):
        assert output == ""
    elif fmt == "json":
        data = json.loads(output)
        assert_valid(report_schema, data)
        assert data["summary"] == {"files": 2, "findings": 0, "errors": 0}
    else:
        log = json.loads(output)
        assert_valid(sarif_schema, log)
        (sarif_run,) = log["runs"]
        assert sarif_run["results"] == []
        assert sarif_run["invocations"][0]["executionSuccessful"] is True
        assert [a["location"]["uri"] for a in sarif_run["artifacts"]] == [CLEAN, FIXED]


@pytest.mark.parametrize("fmt", FORMAT_CHOICES)
def test_file_that_cannot_be_checked_run(fmt, report_schema, sarif_schema):
    # A missing file ends as GC901 before any TensorFlow starts: cheap to run per format.
    run = run_cli("--format", fmt, MISSING)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1] == "No findings in 0 checked files; 1 file could not be checked"
    assert not ANSI.search(run.stdout)
    if fmt in ("full", "concise"):
        assert run.stdout == f"{MISSING}: GC901 no such file or directory\n"
    elif fmt == "json":
        data = json.loads(run.stdout)
        assert_valid(report_schema, data)
        assert data["files"][0]["error"] == {"code": "GC901", "message": "no such file or directory"}
        assert data["summary"] == {"files": 1, "findings": 0, "errors": 1}
    elif fmt == "sarif":
        log = json.loads(run.stdout)
        assert_valid(sarif_schema, log)
        (invocation,) = log["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        (note,) = invocation["toolExecutionNotifications"]
        assert note["level"] == "error"
        assert note["descriptor"]["id"] == "GC901"
        assert note["message"]["text"] == f"GC901 script-error: {MISSING}: no such file or directory"
        assert log["runs"][0]["results"] == []
    else:
        assert run.stdout == f"::error file={MISSING},title=GC901 script-error::no such file or directory\n"
        parse_command(run.stdout.rstrip("\n"))


# -- hand-built reports: awkward text, warnings, a file that timed out -------------------------------
AWKWARD_MESSAGE = "100% of q, argmax: no gradient\nsecond line\r\nthird — ünïcode ✂ 数"
AWKWARD_PATH = "dir, with: odd/ünï cödé%20.py"
TIMEOUT_MESSAGE = "no gradient within 120 s: raise --timeout, or make the first step come sooner"


@pytest.fixture
def awkward_report() -> Report:
    return Report(
        files=[
            FileResult(
                AWKWARD_PATH,
                steps_checked=1,
                findings=[
                    Finding(
                        "GC201",
                        "gradient of dense/kernel is 0, everywhere: check the mask",
                        AWKWARD_PATH,
                        line=12,
                        column=5,
                        variables=["dense/kernel"],
                    ),
                    Finding(
                        "GC101",
                        AWKWARD_MESSAGE,
                        AWKWARD_PATH,
                        line=3,
                        column=9,
                        end_line=3,
                        end_column=24,
                        op="ArgMax",
                        call="tf.argmax",
                        variables=["dense/kernel", "dense/bias"],
                        chain=[ChainLink("MatMul", 2), ChainLink("ArgMax", 3, cut=True)],
                        chain_source="dense/kernel",
                        fix="use the values, not the index: 50% less, {braces}, a,b:c",
                        notes=["a note, with: punctuation"],
                    ),
                ],
            ),
            FileResult("slow.py", TIMEOUT, CheckError("GC903", TIMEOUT_MESSAGE)),
        ]
    )


def test_github_escaping():
    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    # "%" first: an escape sequence already in the text survives the round trip.
    assert escape_property("%0A%3A") == "%250A%253A"
    for text in (AWKWARD_MESSAGE, AWKWARD_PATH, "%0A%3A%2C%25", "::error::x"):
        assert unescape(escape_property(text)) == text
        assert unescape(escape_data(text)) == text


def test_github_awkward(awkward_report):
    output = render(awkward_report, "github")
    assert output.endswith("\n")
    lines = output[:-1].split("\n")
    assert len(lines) == 3  # no raw newline from a message leaked
    parsed = [parse_command(line) for line in lines]

    command, properties, data = parsed[0]  # sorted by line: GC101 (line 3) first
    assert command == "error"
    assert properties == {
        "file": AWKWARD_PATH,
        "line": "3",
        "col": "9",
        "endLine": "3",
        "endColumn": "24",
        "title": "GC101 integer-index-op",
    }
    assert data == (
        f"{AWKWARD_MESSAGE}\n\nFix: use the values, not the index: 50% less, {{braces}}, a,b:c\n\n"
        f"See {github.see('GC101')}"
    )

    command, properties, data = parsed[1]
    assert command == "warning"  # GC2xx
    assert properties == {"file": AWKWARD_PATH, "line": "12", "col": "5", "title": "GC201 zero-gradient"}
    assert data.startswith("gradient of dense/kernel is 0, everywhere: check the mask\n\nSee ")

    assert parsed[2] == ("error", {"file": "slow.py", "title": "GC903 timeout"}, TIMEOUT_MESSAGE)


def test_sarif_awkward(awkward_report, sarif_schema):
    log = json.loads(render(awkward_report, "sarif"))
    assert_valid(sarif_schema, log)
    (sarif_run,) = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    results = sarif_run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("GC101", "error"), ("GC201", "warning")]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == ["GC101", "GC201"]
    assert "GC903" not in {r["ruleId"] for r in results}

    first = results[0]
    assert first["message"]["text"] == (
        f"{AWKWARD_MESSAGE}\n\nPath: dense/kernel → MatMul → ✂ ArgMax → loss\n\n"
        "Note: a note, with: punctuation\n\nFix: use the values, not the index: 50% less, {braces}, a,b:c"
    )
    artifact = first["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == quote(AWKWARD_PATH, safe="/")
    assert unquote(artifact["uri"]) == AWKWARD_PATH
    assert not re.search(r"[ ,:]", artifact["uri"])  # a ":" before any "/" would read as a scheme
    assert artifact["uriBaseId"] == SRCROOT
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 9,
        "endLine": 3,
        "endColumn": 24,
    }
    # No end known: the region is the start only.
    assert results[1]["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 5}
    assert first["properties"]["variables"] == ["dense/kernel", "dense/bias"]
    # The fingerprint ignores the line, so an alert survives code moving above it.
    moved = Report(files=[FileResult(AWKWARD_PATH, findings=[awkward_report.files[0].findings[1]])])
    moved.files[0].findings[0].line = 30
    moved_log = sarif_log(moved)
    assert moved_log["runs"][0]["results"][0]["partialFingerprints"] == first["partialFingerprints"]
    # ... and two findings alike but for the line keep distinct identities.
    again = dataclasses.replace(moved.files[0].findings[0], line=40)
    twice = Report(files=[FileResult(AWKWARD_PATH, findings=[moved.files[0].findings[0], again])])
    fingerprints = [r["partialFingerprints"] for r in sarif_log(twice)["runs"][0]["results"]]
    assert len(fingerprints) == 2 and fingerprints[0] != fingerprints[1]

    (invocation,) = sarif_run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"] == f"GC903 timeout: slow.py: {TIMEOUT_MESSAGE}"
    assert sarif_run["tool"]["driver"]["notifications"][note["descriptor"]["index"]]["id"] == "GC903"
    note_artifact = note["locations"][0]["physicalLocation"]["artifactLocation"]
    assert note_artifact["uri"] == "slow.py"
    assert [a["location"]["uri"] for a in sarif_run["artifacts"]] == [artifact["uri"], "slow.py"]


def test_json_awkward(awkward_report, report_schema):
    data = json.loads(render(awkward_report, "json"))
    assert_valid(report_schema, data)
    assert data["summary"] == {"files": 2, "findings": 2, "errors": 1}
    assert data["files"][1]["error"] == {"code": "GC903", "message": TIMEOUT_MESSAGE}
    assert data["files"][1]["status"] == "timeout"
    assert [FileResult.from_json(f) for f in data["files"]] == [
        FileResult(r.path, r.status, r.error, r.steps_checked, sorted(r.findings, key=Finding.sort_key))
        for r in awkward_report.files
    ]


@pytest.mark.parametrize("fmt", FORMAT_CHOICES)
def test_timeout_in_every_format(fmt, awkward_report):
    output = render(awkward_report, fmt)
    assert "GC903" in output
    assert TIMEOUT_MESSAGE in output
    assert not ANSI.search(output)
    assert awkward_report.exit_code() == 2
    assert awkward_report.summary() == "2 findings (1 warning) in 1 file; 1 file could not be checked"


def test_concise_awkward_one_line_per_entry(awkward_report):
    # Single-line messages (the engines' messages are one line): one line per finding or error.
    awkward_report.files[0].findings[1].message = "100% of q, argmax: no gradient — ünïcode ✂"
    lines = render(awkward_report, "concise").splitlines()
    assert lines == [
        f"{AWKWARD_PATH}:3:9: GC101 100% of q, argmax: no gradient — ünïcode ✂",
        f"{AWKWARD_PATH}:12:5: GC201 gradient of dense/kernel is 0, everywhere: check the mask",
        f"slow.py: GC903 {TIMEOUT_MESSAGE}",
    ]


def test_columns_count_characters_not_bytes(tmp_path, sarif_schema):
    # Python reports byte offsets; findings carry character columns (the engine converts,
    # see sourcemap.char_column), and SARIF and GitHub pass them through unchanged.
    from gradcheck.sourcemap import char_column

    line = 'label = "héllo wörld"; index = tf.math.argmax(q, axis=1)'
    script = tmp_path / "é.py"
    script.write_text(f"import tensorflow as tf\n{line}\n", encoding="utf-8")
    encoded = line.encode("utf-8")
    byte_col = encoded.index(b"tf.math.argmax") + 1
    char_col = line.index("tf.math.argmax") + 1
    char_end = len(line) + 1
    assert byte_col == char_col + 2  # "é" and "ö" take two bytes each
    assert char_column(str(script), 2, byte_col) == char_col
    assert char_column(str(script), 1, 8) == 8  # an ASCII line is left alone
    finding = Finding("GC101", "argmax", str(script), 2, char_col, 2, char_end, variables=["v"])
    report = Report(files=[FileResult(str(script), findings=[finding])])

    log = sarif_log(report)
    assert_valid(sarif_schema, log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["region"] == {"startLine": 2, "startColumn": char_col, "endLine": 2, "endColumn": char_end}
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"
    # An absolute path is a file URI, not relative to %SRCROOT%.
    assert location["artifactLocation"]["uri"] == script.as_uri()
    assert "uriBaseId" not in location["artifactLocation"]

    _, properties, _ = parse_command(render(report, "github").rstrip("\n"))
    assert (properties["col"], properties["endColumn"]) == (str(char_col), str(char_end))


# The samples in docs/output-formats.md are checked against real output, with every other
# shown output of the docs, by tests/test_docs_commands.py::test_shown_output_is_real.
