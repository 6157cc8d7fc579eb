"""Bad input of every kind ends with a one-line reason and the right exit code, never a
gradcheck traceback, and the other files of the same run are still checked."""

from __future__ import annotations

import json

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
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"gradcheck: no Python files to check in {tmp_path}"


def test_text_format_shows_one_line_per_error():
    proc = run_cli(str(FIXTURES / "syntax_error.py"), str(FIXTURES / "empty.py"))
    assert proc.returncode == 2
    lines = [line for line in proc.stdout.splitlines() if line]
    assert len(lines) == 2 and all(": GC90" in line for line in lines)
    assert proc.stderr.strip().endswith("2 files could not be checked")
