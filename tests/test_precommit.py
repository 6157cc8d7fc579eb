"""The pre-commit hooks, for real: a throwaway project repository whose
``.pre-commit-config.yaml`` points at a committed copy of this working tree (pre-commit
installs a hook repository at a commit, so uncommitted files would be invisible), and
``pre-commit run``.

The static hook gets its own environment, built by pre-commit from this pyproject (click and
numpy from PyPI, no TensorFlow); it is built once per test session. The trace hook runs the
``gradcheck`` of the environment the tests run in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, ROOT

BIN = Path(sys.executable).parent
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit")
pytestmark = pytest.mark.skipif(PRE_COMMIT is None or shutil.which("git") is None, reason="needs pre-commit and git")

STEP = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
optimizer = keras.optimizers.SGD(0.1)
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 3, size=16)
targets = np.random.rand(16).astype("float32")

with tf.GradientTape() as tape:
    q = model(states)
    {selection}
    loss = tf.reduce_mean(tf.square(targets - q_action))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
BROKEN = STEP.format(selection="q_action = tf.cast(tf.argmax(q, axis=1), tf.float32)")
FIXED = STEP.format(selection="q_action = tf.gather(q, actions, batch_dims=1)")


def _notebook(step: str) -> str:
    """The step as a notebook: an install cell, then the code in a cell of its own."""
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "%pip install keras"}
    ]
    cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": step})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


HELPER = "import tensorflow as tf\n\n\ndef double(x):\n    return tf.round(x) * 2\n"


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run(
        args, cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )


def _git(cwd: Path, *args: str) -> None:
    result = _run(["git", *args], cwd)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """What pre-commit installs from: the package and the hooks manifest, committed."""
    repo = tmp_path_factory.mktemp("hook-repo") / "gradcheck"
    shutil.copytree(ROOT / "gradcheck", repo / "gradcheck", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", ".pre-commit-hooks.yaml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot of the working tree")
    return repo


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(path: Path, hook_repo: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    _git(path, "init", "-q")
    rev = _run(["git", "rev-parse", "HEAD"], hook_repo).stdout.strip()
    config = f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: gradcheck\n      - id: gradcheck-trace\n"
    (path / ".pre-commit-config.yaml").write_text(config)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        if text.startswith("#!"):
            (path / name).chmod(0o755)
    _git(path, "add", "-A")
    return path


def _pre_commit_run(project: Path, hook: str, home: Path):
    env = {"PRE_COMMIT_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return _run([PRE_COMMIT, "run", hook, "--all-files", "--color", "never"], project, env)


def test_static_hook_fails_on_the_broken_step_and_passes_on_the_fixed_one(tmp_path, hook_repo, pre_commit_home):
    # An empty __init__.py and an extensionless Python script must not fail the hook.
    files = {"train.py": BROKEN, "pkg/__init__.py": "", "bin/run": "#!/usr/bin/env python\nprint('hi')\n"}
    files["explore.ipynb"] = _notebook(BROKEN)
    project = _project(tmp_path / "project", hook_repo, files)
    broken = _pre_commit_run(project, "gradcheck", pre_commit_home)
    output = broken.stdout + broken.stderr
    assert broken.returncode == 1, output
    assert "train.py:13:" in output and "GC101" in output
    assert "explore.ipynb:cell 2:13:" in output  # notebooks are read too

    (project / "train.py").write_text(FIXED)
    (project / "explore.ipynb").write_text(_notebook(FIXED))
    _git(project, "add", "-A")
    fixed = _pre_commit_run(project, "gradcheck", pre_commit_home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr

    # The hook's environment holds gradcheck and its two dependencies, not TensorFlow.
    packages = pre_commit_home.glob("repo*/py_env-*/lib/python*/site-packages/*")
    installed = {p.name.split("-")[0].lower() for p in packages}
    assert {"gradcheck", "click", "numpy"} <= installed
    assert not installed & {"tensorflow", "tensorflow_cpu", "keras"}


def test_trace_hook_runs_only_training_files(tmp_path, hook_repo, pre_commit_home):
    pytest.importorskip("tensorflow")
    project = _project(tmp_path / "project", hook_repo, {"train.py": BROKEN, "helper.py": HELPER})
    result = _pre_commit_run(project, "gradcheck-trace", pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "train.py:13:" in output and "GC101" in output
    assert "helper.py" not in output  # not training code: skipped, not run
    assert "1 finding in 1 file" in output


def test_hook_manifest_pins_what_the_hooks_need():
    yaml = pytest.importorskip("yaml")
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    static, trace = hooks["gradcheck"], hooks["gradcheck-trace"]
    assert (static["language"], static["entry"], static["types_or"]) == (
        "python",
        "gradcheck --static",
        ["python", "jupyter"],
    )
    assert (trace["language"], trace["types"], trace["require_serial"]) == ("system", ["python"], True)
    assert "--training-only" in trace["entry"].split()
    for hook in (static, trace):
        assert re.search(hook["files"], "pkg/train.py") and not re.search(hook["files"], "bin/run")
    assert static["minimum_pre_commit_version"] == trace["minimum_pre_commit_version"]
    assert "- id: gradcheck-trace" in (ROOT / "docs" / "pre-commit.md").read_text()


def test_the_documented_static_hook_runs_on_commit_not_again_on_push(tmp_path, hook_repo, pre_commit_home):
    """docs/pre-commit.md's snippet: with the pre-push hook installed too, the static hook's
    findings are not printed a second time on push (where the trace hook runs)."""
    yaml = pytest.importorskip("yaml")
    doc = (ROOT / "docs" / "pre-commit.md").read_text()
    snippet = yaml.safe_load(re.search(r"```yaml\n(.*?)```", doc, re.S).group(1))
    [static] = [hook for hook in snippet["repos"][0]["hooks"] if hook["id"] == "gradcheck"]
    project = _project(tmp_path / "project", hook_repo, {"train.py": BROKEN})
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    config["repos"][0]["hooks"] = [static]  # the documented static hook alone (no TensorFlow run here)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(project, "add", "-A")
    env = {"PRE_COMMIT_HOME": str(pre_commit_home), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for stage, runs in (("pre-commit", True), ("pre-push", False)):
        done = _run([PRE_COMMIT, "run", "--hook-stage", stage, "--all-files", "--color", "never"], project, env)
        output = done.stdout + done.stderr
        assert ("GC101" in output) is runs, (stage, output)
        assert done.returncode == (1 if runs else 0), output
