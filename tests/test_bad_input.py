"""Bad input of every kind ends with a one-line reason and the right exit code, never a
gradcheck traceback, and the other files of the same run are still checked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "bad_input"

# file -> (status, code of the error or of the single finding, text the reason must contain)
EXPECTED = {
    "raises_early.py": ("error", "GC901", "ValueError: the data file is missing (at "),
    "no_gradient.py": ("error", "GC902", "without computing any gradient"),
    "exit_zero.py": ("error", "GC902", "sys.exit(0)"),
    "exit_three.py": ("error", "GC901", "sys.exit(3)"),
    "os_exit.py": ("error", "GC901", "exit status 3"),
    "needs_argv.py": ("error", "GC901", "needs command-line arguments"),
    "reads_stdin.py": ("error", "GC901", "reads standard input"),
    "segfault.py": ("error", "GC901", "SIGSEGV"),
    "missing_module.py": ("error", "GC901", "imports 'a_module_that_does_not_exist', which is not installed"),
    "syntax_error.py": ("error", "GC901", "SyntaxError"),
    "empty.py": ("error", "GC902", "empty"),
    "notes.txt": ("error", "GC901", "not a Python source file"),
    "prints_megabytes.py": ("checked", "GC102", ""),
    "with_threads.py": ("checked", "GC102", ""),
    "changes_directory.py": ("checked", "GC104", ""),
    "imports_sibling.py": ("checked", "GC103", ""),
    "main_guard.py": ("checked", "GC102", ""),
    "latin1.py": ("error", "GC901", "cannot decode"),
    "bom.py": ("checked", "GC102", ""),
    "missing.py": ("error", "GC901", "no such file"),
}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "latin1.py").write_bytes("# caf\xe9\nx = 'd\xe9j\xe0 vu'\n".encode("latin-1"))
    (tmp / "bom.py").write_bytes(
        b"\xef\xbb\xbfimport tensorflow as tf\n"
        b"w = tf.Variable([1.5, 2.5], name='w')\n"
        b"with tf.GradientTape() as tape:\n"
        b"    loss = tf.reduce_sum(tf.round(w))\n"
        b"tape.gradient(loss, [w])\n"
    )
    paths = [str(FIXTURES / name) for name in EXPECTED if (FIXTURES / name).exists()]
    paths += [str(tmp / "latin1.py"), str(tmp / "bom.py"), str(tmp / "missing.py")]
    proc = run_cli("--format", "json", "-j", "2", *paths)
    report = json.loads(proc.stdout)
    return proc, {p["path"].rsplit("/", 1)[-1]: p for p in report["files"]}


def test_every_file_is_reported(matrix):
    proc, files = matrix
    assert set(files) == set(EXPECTED)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_outcome(matrix, name):
    _, files = matrix
    status, code, text = EXPECTED[name]
    result = files[name]
    assert result["status"] == status, result
    if status == "checked":
        assert result["error"] is None
        assert [f["code"] for f in result["findings"]] == [code], result["findings"]
    else:
        assert result["error"]["code"] == code
        assert text in result["error"]["message"]
        assert "\n" not in result["error"]["message"]


def test_a_finding_in_a_sibling_module_points_there(matrix):
    _, files = matrix
    (finding,) = files["imports_sibling.py"]["findings"]
    assert finding["path"].endswith("sibling_helper.py") and finding["line"] == 5


def test_an_endless_script_times_out_and_the_others_are_still_checked():
    # A separate run with a short timeout: under load a TensorFlow import alone can take seconds.
    proc = run_cli("--format", "json", "--timeout", "6", str(FIXTURES / "infinite_loop.py"), str(FIXTURES / "empty.py"))
    files = {p["path"].rsplit("/", 1)[-1]: p for p in json.loads(proc.stdout)["files"]}
    assert files["infinite_loop.py"]["status"] == "timeout"
    error = files["infinite_loop.py"]["error"]
    assert error["code"] == "GC903"
    # where the script was, when it got that far (a loaded machine may still be importing TensorFlow)
    assert error["message"].startswith("no gradient was checked within 6 s")
    assert "raise --timeout" in error["message"]
    assert "infinite_loop.py:" in error["message"] or error["message"].endswith("(raise --timeout)")
    assert files["empty.py"]["error"]["code"] == "GC902"
    assert proc.returncode == 2


def test_directory_with_no_python(tmp_path):
    (tmp_path / "README.txt").write_text("nothing here\n")
    proc = run_cli(str(tmp_path))
    assert proc.returncode == 5  # pytest's "no tests collected"
    assert proc.stderr.strip() == f"gradcheck: nothing to check: no Python file or notebook in {tmp_path}"
    # the static engine and the JSON format say the same
    static = run_cli("--static", "--format", "json", str(tmp_path))
    assert static.returncode == 5 and static.stdout == ""


def test_text_format_shows_one_line_per_error():
    proc = run_cli(str(FIXTURES / "syntax_error.py"), str(FIXTURES / "empty.py"))
    assert proc.returncode == 2
    lines = [line for line in proc.stdout.splitlines() if line]
    assert len(lines) == 2 and all(": GC90" in line for line in lines)
    assert proc.stderr.strip().endswith("2 files could not be checked")


# --- odd files: one such file never aborts the run (issue 35, part 4) ----------------------

_STEP = "import tensorflow as tf\nw = tf.Variable([1.5, 2.5])\nwith tf.GradientTape() as tape:\n    loss = tf.reduce_sum(tf.round(w))\n"


def _odd_files(tmp) -> dict[str, str]:
    """Each odd kind of input -> the path to give gradcheck for it; ``good.py`` is one file that
    must still be checked (GC102) beside them."""
    (tmp / "good.py").write_text(_STEP + "tape.gradient(loss, [w])\n")
    (tmp / "plus.py").write_text(_STEP + "x = " + "+".join(["w"] * 5000) + "\ntape.gradient(loss, [w])\n")
    (tmp / "chain.py").write_text(_STEP + "x = w" + ".a" * 5000 + "\ntape.gradient(loss, [w])\n")
    (tmp / "nested_if.py").write_text(_STEP + "x = " + "1 if w else " * 3000 + "0\ntape.gradient(loss, [w])\n")
    # compiles, but deeper than the static analysis' recursion can follow
    (tmp / "deep_for_static.py").write_text(
        _STEP + "    x = " + "+".join(["w"] * 1500) + "\ntape.gradient(loss, [w])\n"
    )
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "execution_count": None, "source": 5}
    (tmp / "int_source.ipynb").write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})
    )
    os.mkfifo(tmp / "fifo.py")
    os.symlink("/dev/zero", tmp / "zero.py")
    walked = tmp / "walked"
    walked.mkdir()
    (walked / "sub").mkdir()
    os.symlink("..", walked / "sub" / "up")  # a directory loop: os.walk must not follow it
    os.symlink("loop.py", walked / "loop.py")  # a file that is a symlink to itself
    (walked / "fine.py").write_text(_STEP + "tape.gradient(loss, [w])\n")
    return {
        "plus.py": str(tmp / "plus.py"),
        "chain.py": str(tmp / "chain.py"),
        "nested_if.py": str(tmp / "nested_if.py"),
        "int_source.ipynb": str(tmp / "int_source.ipynb"),
        "fifo.py": str(tmp / "fifo.py"),
        "zero.py": str(tmp / "zero.py"),
        "loop.py": str(walked),
        "missing_function": str(tmp / "good.py") + "::not_defined",
        "deep_for_static.py": str(tmp / "deep_for_static.py"),
    }


# kind -> (file name in the report, text of its one-line GC901 reason); None: not an error
# for that engine
ODD = {
    "plus.py": ("plus.py", "RecursionError"),
    "chain.py": ("chain.py", "RecursionError"),
    "nested_if.py": ("nested_if.py", "RecursionError"),
    "int_source.ipynb": ("int_source.ipynb", "cell 1: its source is int, not text"),
    "fifo.py": ("fifo.py", "a named pipe (FIFO)"),
    "zero.py": ("zero.py", "a character device"),
    "loop.py": ("loop.py", "Too many levels of symbolic links"),
    "missing_function": ("good.py::not_defined", "defines no function 'not_defined'"),
    "deep_for_static.py": ("deep_for_static.py", "nested too deeply for the static analysis"),
}
TRACE_ONLY_OK = {"deep_for_static.py"}  # it compiles, so the script runs (and the trace engine checks it)


@pytest.fixture(scope="module", params=["static", "trace"])
def odd_run(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"odd_{request.param}")
    targets = _odd_files(tmp)
    kinds = [k for k in ODD if request.param == "static" or k not in TRACE_ONLY_OK]
    args = ["--static"] if request.param == "static" else ["-j", "2"]
    paths = [targets[k] for k in kinds]
    json_run = run_cli(*args, "--format", "json", *paths, str(tmp / "good.py"), timeout=300)
    text_run = run_cli(*args, *paths, timeout=300) if request.param == "static" else None
    return request.param, kinds, json_run, text_run


@pytest.mark.parametrize("kind", sorted(ODD))
def test_an_odd_file_is_one_gc901_line_and_the_others_are_checked(odd_run, kind):
    engine, kinds, json_run, text_run = odd_run
    if kind not in kinds:
        pytest.skip(f"{kind} compiles: the {engine} engine runs it")
    assert "Traceback" not in json_run.stdout + json_run.stderr
    assert json_run.returncode == 2, json_run.stderr
    report = json.loads(json_run.stdout)  # valid JSON, whatever the odd files were
    name, text = ODD[kind]
    base = name.split("::")[0]
    (entry,) = [
        e for e in report["files"] if e["path"].endswith("/" + base) and e["error"] and text in e["error"]["message"]
    ]
    assert entry["status"] == "error" and entry["error"]["code"] == "GC901", entry
    assert "\n" not in entry["error"]["message"]
    # the good file beside them was checked, and found
    good = [e for e in report["files"] if e["path"].endswith("/good.py") and e["status"] == "checked"]
    assert len(good) == 1 and [f["code"] for f in good[0]["findings"]] == ["GC102"]
    if text_run is not None:
        assert "Traceback" not in text_run.stdout + text_run.stderr
        assert text_run.returncode == 2
        lines = [line for line in text_run.stdout.splitlines() if f"/{base}: GC901 " in line and text in line]
        assert len(lines) == 1, text_run.stdout


def test_a_walked_folder_with_a_loop_still_checks_its_other_files(tmp_path):
    targets = _odd_files(tmp_path)
    proc = run_cli("--static", "--format", "json", targets["loop.py"])
    files = {e["path"].rsplit("/", 1)[-1]: e for e in json.loads(proc.stdout)["files"]}
    assert set(files) == {"loop.py", "fine.py"}, files  # sub/up -> .. was not followed
    assert [f["code"] for f in files["fine.py"]["findings"]] == ["GC102"]
    assert proc.returncode == 2


def _deep_folder(base: Path) -> Path:
    """A folder nested past PATH_MAX: os.walk cannot open it (ENAMETOOLONG), root neither."""
    fd = os.open(base, os.O_RDONLY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            new = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
        with open(os.open("train.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write(_STEP + "tape.gradient(loss, [w])\n")
    finally:
        os.close(fd)
    return base


@pytest.mark.parametrize("how", ["too-long", "no-permission"])
def test_an_unreadable_folder_is_said(tmp_path, how):
    (tmp_path / "good.py").write_text(_STEP + "tape.gradient(loss, [w])\n")
    if how == "too-long":
        (tmp_path / "deep").mkdir()
        _deep_folder(tmp_path / "deep")
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads a folder whatever its mode (the too-long case covers root)")
        locked = tmp_path / "locked"
        locked.mkdir()
        (locked / "train.py").write_text(_STEP)
        locked.chmod(0)
    try:
        proc = run_cli("--static", "--format", "json", str(tmp_path))
    finally:
        if how == "no-permission":
            (tmp_path / "locked").chmod(0o755)
    report = json.loads(proc.stdout)
    errors = [e for e in report["files"] if e["status"] == "error"]
    assert len(errors) == 1 and errors[0]["error"]["code"] == "GC901", report
    assert errors[0]["error"]["message"].startswith("cannot read the directory: ")
    assert [e["status"] for e in report["files"] if e["path"].endswith("good.py")] == ["checked"]
    assert proc.returncode == 2


def test_static_function_target_defined_in_a_block_is_checked(tmp_path):
    """``FILE::build`` bound inside ``try``/``if`` (or by ``import *``) is not "no function"."""
    (tmp_path / "guarded.py").write_text(
        _STEP + "try:\n    def build():\n        return None\nexcept ImportError:\n    pass\n"
    )
    (tmp_path / "star.py").write_text("from os.path import *\n" + _STEP)
    proc = run_cli("--static", "--format", "json", f"{tmp_path}/guarded.py::build", f"{tmp_path}/star.py::join")
    assert [e["status"] for e in json.loads(proc.stdout)["files"]] == ["checked", "checked"], proc.stdout


def test_run_child_refuses_a_fifo_itself(tmp_path):
    """``pytest --gradcheck`` and the patch verifier call ``run_child`` directly: a FIFO named
    ``*.py`` is refused there too, not run (its reader would wait for a writer forever)."""
    from gradcheck.check import Options, run_child

    os.mkfifo(tmp_path / "pipe.py")
    result = run_child(str(tmp_path / "pipe.py"), Options(timeout=600))
    assert (result.status, result.error.code) == ("error", "GC901")
    assert "a named pipe (FIFO)" in result.error.message
