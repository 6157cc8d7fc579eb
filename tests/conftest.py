"""Shared fixtures. Engine tests run scripts in-process (TensorFlow is imported once per
test process); CLI tests run real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: A git identity and no user or system configuration, for the repositories tests make.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gradcheck tests",
    "GIT_AUTHOR_EMAIL": "tests@gradcheck.invalid",
    "GIT_COMMITTER_NAME": "gradcheck tests",
    "GIT_COMMITTER_EMAIL": "tests@gradcheck.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

# An error inside gradcheck's own diagnosis must fail the test, not become a warning.
os.environ["GRADCHECK_STRICT"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "keras2: runs Keras 2 (tf_keras, TF_USE_LEGACY_KERAS=1); the tf_keras sessions of the version matrix "
        "(noxfile.py) select these",
    )


def pytest_collection_modifyitems(items):
    """Real-world cases for Keras 2 carry the ``keras2`` marker too (their ``.json`` says so)."""
    for item in items:
        script = getattr(getattr(item, "callspec", None), "params", {}).get("script")
        if isinstance(script, Path) and script.with_suffix(".json").exists():
            from tests.realworld_check import expectation, keras_major

            if keras_major(expectation(script)) == 2:
                item.add_marker(pytest.mark.keras2)


@pytest.fixture
def run_script(tmp_path):
    """Write ``source`` to a file and check it in-process; returns the FileResult."""

    def run(source: str, name: str = "script.py", **kwargs):
        import keras

        from gradcheck.trace.run.runner import run_file

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
