"""Shared fixtures. Engine tests run scripts in-process (TensorFlow is imported once per
test process); CLI tests run real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# An error inside gradcheck's own diagnosis must fail the test, not become a warning.
os.environ["GRADCHECK_STRICT"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture
def run_script(tmp_path):
    """Write ``source`` to a file and check it in-process; returns the FileResult."""

    def run(source: str, name: str = "script.py", **kwargs):
        import keras

        from gradcheck.trace.runner import run_file

        keras.backend.clear_session()  # fresh layer names: dense, dense_1 ...
        path = tmp_path / name
        path.write_text(source, encoding="utf-8")
        return run_file(str(path), **kwargs)

    return run


def run_cli(*args: str, cwd: Path | str | None = None, env: dict | None = None, timeout: float = 600):
    """``python -m gradcheck ARGS`` in a real subprocess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )
