"""Every shell command in the README and docs runs as written.

Commands are the lines of ```sh blocks (a trailing ``  # comment`` is dropped). Each runs
with ``bash`` in a scratch project that has the files the docs name (``train.py``,
``gan.py``, ``models.py``, ``src/``, ``scripts/``, ``notebook.ipynb``, ``examples/``), and
must exit 0 or 1 (1: it found the bug it was shown on). Set-up lines (a new virtual
environment, ``pip install``) are what CI itself runs: the README's test command is
``.ci/run``'s, and ``.ci/run`` runs the quick-start command in a fresh clone. Long runs
(hypothesis at 500 examples, benchmarks, the nox matrix) are checked for what they name.
Python examples in the API and pytest docs import only gradcheck and the libraries it is
used with, and every name the API docs list exists.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*/*.md"))]


def _blocks(language: str) -> list[tuple[Path, str]]:
    out = []
    for path in DOCS:
        for block in re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            out.append((path, block))
    return out


def _commands() -> list[tuple[str, str]]:
    out = []
    for path, block in _blocks("sh"):
        for line in block.splitlines():
            command = re.split(r"\s{2,}#", line)[0].strip()
            if command and not command.startswith("#"):
                out.append((str(path.relative_to(ROOT)), command))
    return out


COMMANDS = _commands()


def _kind(command: str) -> str:
    if "python3 -m venv" in command or command.startswith("pip install"):
        return "setup"
    if command.startswith(("GRADCHECK_HYPOTHESIS_EXAMPLES=", "GRADCHECK_FUZZ_EXAMPLES=", "nox", "python benchmarks/")):
        return "long"
    if command.startswith("python -m tests.realworld_check"):
        return "long"
    return "run"


def test_commands_were_found():
    kinds = {_kind(c) for _, c in COMMANDS}
    assert kinds == {"setup", "long", "run"}, COMMANDS


def test_setup_commands_are_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = [c for doc, c in COMMANDS if doc == "README.md"]
    assert readme[1] in ci.splitlines(), "CI runs the README's test command verbatim"
    assert "quick_start=$(sed -n '/^```sh$/{n;p;q}' README.md)" in ci, "CI runs the quick-start command"
    for _, command in COMMANDS:
        if "pip install" in command:
            # gradcheck is not on PyPI yet: an install line names a clone (-e) or a git URL
            assert re.search(r"pip install -e |git\+https://", command), command


@pytest.mark.parametrize("command", sorted({c for _, c in COMMANDS if _kind(c) == "long"}))
def test_long_commands_name_what_exists(command):
    words = shlex.split(command)
    for word in words:
        if word.endswith(".py") or word.startswith("tests/"):
            assert (ROOT / word).exists(), word
    env = [w.split("=")[0] for w in words if re.match(r"^[A-Z_]+=", w)]
    for name in env:
        assert any(name in p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py")), name
    if words[0] == "nox":
        done = subprocess.run(
            [sys.executable, "-m", "nox", "-l", *words[1:]], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0 and "matrix(" in done.stdout, done.stdout + done.stderr


MODELS = """\
import keras
import numpy as np


def build():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    return model, (np.random.rand(8, 4).astype("float32"), np.random.rand(8, 2).astype("float32"))
"""

NEEDS_ARGS = """\
import argparse

import keras
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--data", required=True)
args = parser.parse_args()
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.round(model(tf.ones((2, 4)))))
tape.gradient(loss, model.trainable_variables)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A scratch project with every file the docs' commands name."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    gallery = ROOT / "examples" / "gallery"
    (root / "train.py").write_text(NEEDS_ARGS.replace("required=True", "default='x'").replace(", type=int", ""))
    (root / "gan.py").write_text((gallery / "gan_wrong_variables_fixed.py").read_text())
    (root / "models.py").write_text(MODELS)
    (root / "src").mkdir()
    (root / "src" / "train_round.py").write_text((gallery / "rounding_broken.py").read_text())
    (root / "scripts").mkdir()
    (root / "scripts" / "train_dqn.py").write_text((ROOT / "examples" / "dqn_broken.py").read_text())
    (root / "data").mkdir()
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell((gallery / "rounding_broken.py").read_text())]
    nbformat.write(notebook, str(root / "notebook.ipynb"))
    # a repository with everything committed: `gradcheck --fix` edits only committed files
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "scratch project"]):
        subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)
    return root


def _run_in(project: Path, command: str) -> subprocess.CompletedProcess:
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        ["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True, timeout=900, check=False
    )


@pytest.mark.parametrize("command", sorted({c for _, c in COMMANDS if _kind(c) == "run"}))
def test_command_runs_as_written(project, command):
    if "--graph" in command and command.split("--graph")[1].split()[0].endswith(".svg") and not shutil.which("dot"):
        pytest.skip("Graphviz's dot is not installed")
    train = project / "train.py"
    saved = train.read_text()
    if "train.py -- " in command:
        train.write_text(NEEDS_ARGS)  # a script that needs its arguments
    try:
        done = _run_in(project, command)
    finally:
        train.write_text(saved)
    assert done.returncode in (0, 1), f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert "Usage:" not in done.stderr and "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert "could not be checked" not in done.stderr, done.stdout[-2000:]


def test_python_examples_import_only_what_ships():
    allowed = {"gradcheck", "keras", "numpy", "tensorflow", "pytest", "hypothesis", "tf_keras"}
    for path, block in _blocks("python"):
        if path.name not in ("python-api.md", "pytest.md", "notebooks.md", "index.md"):
            continue
        tree = ast.parse(re.sub(r"^%.*$", "", block, flags=re.M))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
                if name.startswith("gradcheck"):
                    __import__(name)


def test_every_name_the_api_docs_list_exists():
    import gradcheck

    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    listed = re.search(r"Every name above is importable from `gradcheck`: (.*?)\.\n", text, re.S)
    assert listed is not None
    names = re.findall(r"`(\w+)`", listed.group(1))
    assert len(names) >= 10
    for name in names:
        assert hasattr(gradcheck, name), name
    for name in re.findall(r"gradcheck\.(\w+)\(", text):
        assert hasattr(gradcheck, name), name
