"""Every shell command in the README and docs runs as written, and every output they show is real.

Commands are the lines of ```sh blocks (a trailing ``  # comment`` is dropped). Each runs
with ``bash`` in a scratch project that has the files the docs name (``train.py``,
``gan.py``, ``models.py``, ``src/``, ``scripts/``, ``notebook.ipynb``, ``test_qnet.py``,
``examples/``), and must exit 0 or 1 (1: it found the bug it was shown on).

Shown output: a ```text or ```console block whose lines start with ``$ COMMAND`` shows what
each command prints (stdout, then stderr, as on a terminal); the command runs in the same
scratch project and its output must be the block's, exactly, up to placeholders: the
project's and the repository's directory are ``/path/to/gradcheck``, the installed
packages' ``/path/to/site-packages``, pytest's durations (``in 14.48s``) and object
addresses (``0x7f...``) may differ, and TensorFlow's start-up log lines are left out. A
block right after ``<!-- doc-output: python block above -->`` is what the ```python block
before it prints; a ```json block after ``<!-- doc-output: COMMAND | runs[0].results -->``
is that part of the JSON the command prints. Each distinct command runs once (a module
cache), and the commands the sh blocks share with the shown output run once for both.
``python -m tests.test_docs_commands --update`` writes the real output into the docs. Set-up lines (a new virtual
environment, ``pip install``) are what CI itself runs: the README's test command is
``.ci/run``'s, and ``.ci/run`` runs the quick-start command in a fresh clone. Long runs
(hypothesis at 500 examples, benchmarks, the nox matrix) are checked for what they name.
Python examples in the API and pytest docs import only gradcheck and the libraries it is
used with, and every name the API docs list exists.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*/*.md"))]
#: The rule pages are generated from the rule modules, whose examples tests/test_rule_docs.py runs.
SHOWN_DOCS = [path for path in DOCS if path.parent.name != "rules"]


def _blocks(language: str) -> list[tuple[Path, str]]:
    out = []
    for path in DOCS:
        for block in re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            out.append((path, block))
    return out


def _commands() -> list[tuple[str, str]]:
    out = []
    for path, block in _blocks("sh"):
        # a line ending in a backslash goes on on the next one, as in the shell
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            command = re.split(r"\s{2,}#", line)[0].strip()
            if command and not command.startswith("#"):
                out.append((str(path.relative_to(ROOT)), command))
    return out


COMMANDS = _commands()


def _kind(command: str) -> str:
    if "python3 -m venv" in command or command.startswith("pip install"):
        return "setup"
    if command.startswith(
        (
            "GRADCHECK_HYPOTHESIS_EXAMPLES=",
            "GRADCHECK_FUZZ_EXAMPLES=",
            "nox",
            "python benchmarks/",
            "python -m benchmarks.",
        )
    ):
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

PKG_MODEL = """\
import keras


def build():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
"""

PKG_TRAIN = """\
import argparse

import tensorflow as tf

from .model import build

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
args = parser.parse_args()
model = build()
for _ in range(args.epochs):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(tf.ones((2, 4)))))
    tape.gradient(loss, model.trainable_variables)
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


NOTEBOOK_CELLS = (
    """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
x = tf.random.normal((8, 4))
""",
    "## One training step\n\nThe model counts items: its prediction is rounded.",
    """\
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    return grads


train_step(x)
""",
)


def _pytest_doc_test() -> str:
    """The test file docs/pytest.md shows (its first python block), as ``test_qnet.py``."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8"), re.S)[0]


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
    # a package whose training module has a relative import: `gradcheck -m pkg.train`
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(PKG_MODEL)
    (root / "pkg" / "train.py").write_text(PKG_TRAIN)
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(NOTEBOOK_CELLS[0]),
        nbformat.v4.new_markdown_cell(NOTEBOOK_CELLS[1]),
        nbformat.v4.new_code_cell(NOTEBOOK_CELLS[2]),
    ]
    nbformat.write(notebook, str(root / "notebook.ipynb"))
    (root / "test_qnet.py").write_text(_pytest_doc_test())
    # a repository with everything committed: `gradcheck --fix` edits only committed files
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "scratch project"]):
        subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)
    return root


def _run_in(project: Path, command: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = str(ROOT)
    env["COLUMNS"] = "80"  # pytest's rules and truncated summary lines, as in an 80-column terminal
    # pytest-asyncio (installed for the language server's tests) warns in a project that does not configure it;
    # the docs show a user's project, which has no such plugin
    env["PYTEST_ADDOPTS"] = "-p no:asyncio"
    for name in ("CI", "BUILD_NUMBER"):  # on CI, pytest does not truncate summary lines: show a user's terminal
        env.pop(name, None)
    return subprocess.run(
        ["bash", "-c", command],
        cwd=project,
        env=env,
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


#: Each distinct command's run, shared by every test of this module (and by --update).
_RUNS: dict[tuple[str, str, str | None], subprocess.CompletedProcess] = {}


def run(project: Path, command: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    key = (str(project), command, stdin)
    if key not in _RUNS:
        _RUNS[key] = _run_in(project, command, stdin)
    return _RUNS[key]


@pytest.mark.parametrize("command", sorted({c for _, c in COMMANDS if _kind(c) == "run"}))
def test_command_runs_as_written(project, command):
    if (
        "--graph" in command
        and command.split("--graph")[1].split()[0].endswith((".svg", ".png"))
        and not shutil.which("dot")
    ):
        pytest.skip("Graphviz's dot is not installed")
    train = project / "train.py"
    saved = train.read_text()
    if "train.py -- " in command:
        train.write_text(NEEDS_ARGS)  # a script that needs its arguments
    try:
        done = _run_in(project, command) if "train.py" in command else run(project, command)
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


# Shown output ---------------------------------------------------------------------------

MARK = "<!-- doc-output: "
#: Blocks that show no command's output: usage lines, format schematics, diagrams.
NOT_OUTPUT = {
    ("docs/cli.md", "gradcheck [OPTIONS]"),
    ("docs/output-formats.md", "::error file=PATH"),
    ("docs/architecture.md", "gradcheck.__main__"),
    ("docs/architecture.md", "gradcheck/trace/"),
    ("docs/architecture.md", "gradcheck/static/"),
    ("docs/architecture.md", "user code: tape.gradient"),
    ("docs/editors.md", '{\n  "glspc.server.command"'),  # an editor's settings
}
#: Output blocks that are not compared, and why (the reason is also in the marker).
NOT_RUN = {
    "python examples/dqn_fixed.py --plot docs/img/dqn_fixed_learning_curve.png": (
        "a 100-second training run; tests/test_dqn_fixed.py (marker slow) runs it"
    ),
}


@dataclass(frozen=True)
class Shown:
    """One shown output: where it is in a doc, the command that prints it, and the text shown."""

    doc: str
    start: int  # the span of the output (or of the JSON block) in the doc's text
    end: int
    command: str  # a shell command, or "python" for the python block above (its code is ``stdin``)
    expected: str
    stdin: str | None = None
    select: str | None = None  # a part of the JSON the command prints: runs[0].results

    @property
    def key(self) -> str:
        return f"{self.doc}: $ {self.command}" + (f" | {self.select}" if self.select else "")


def _fences(text: str):
    """(language, body start, body end, the line before the fence) of every fenced block."""
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        yield match.group(1), match.start(2), match.end(2), before


def shown_outputs(paths=None) -> tuple[list[Shown], list[tuple[str, str]]]:
    """Every shown output of the docs, and every block that is neither output nor known
    not to be (which the tests refuse: a new output block must say what prints it)."""
    shown, unknown = [], []
    for path in paths or SHOWN_DOCS:
        doc = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        previous_python = None
        for language, start, end, before in _fences(text):
            body = text[start:end]
            marker = before[len(MARK) : -len(" -->")] if before.startswith(MARK) else None
            if language == "python":
                previous_python = body
                continue
            if language not in ("text", "console", "json", ""):
                continue
            if marker == "python block above":
                assert previous_python is not None, f"{doc}: no python block before the output at {start}"
                shown.append(Shown(doc, start, end, "python", body, stdin=previous_python))
            elif marker is not None and marker.startswith("not run: "):
                command = body.split("\n", 1)[0].removeprefix("$ ")
                assert NOT_RUN.get(command) == marker.removeprefix("not run: "), f"{doc}: {marker}"
            elif marker is not None:
                command, _, select = marker.rpartition(" | ")
                shown.append(Shown(doc, start, end, command, body, select=select))
            elif body.startswith("$ "):
                for session in re.finditer(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", body, re.M):
                    shown.append(
                        Shown(doc, start + session.start(2), start + session.end(2), session.group(1), session.group(2))
                    )
            elif not any(doc == d and body.startswith(first) for d, first in NOT_OUTPUT):
                unknown.append((doc, body.split("\n", 1)[0]))
    return shown, unknown


SHOWN, UNKNOWN = shown_outputs()

_TF_LOG = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] .*"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] .*)\n",
    re.M,
)


def real_output(done: subprocess.CompletedProcess, project: Path) -> str:
    """What a terminal shows, with the placeholders the docs use for paths."""
    text = _TF_LOG.sub("", done.stdout + done.stderr)
    for directory, placeholder in (
        (sysconfig.get_paths()["purelib"], "/path/to/site-packages"),
        (str(project), "/path/to/gradcheck"),
        (str(ROOT), "/path/to/gradcheck"),
    ):
        text = text.replace(directory, placeholder)
    return text


def _comparable(text: str) -> str:
    """What may differ from run to run: pytest's durations, object addresses."""
    text = re.sub(r" in \d+\.\d+s\b", " in <T>s", text)
    text = re.sub(r"\b0x[0-9a-f]+\b", "0x<ADDR>", text)
    return text.rstrip("\n")


def _select(data, path: str):
    for name, index in re.findall(r"(\w+)|\[(\d+)\]", path):
        data = data[int(index)] if index else data[name]
    return data


def actual(project: Path, item: Shown) -> str:
    """The real text for ``item``, as the doc would show it."""
    if item.command == "python":
        done = run(project, "python -", stdin=item.stdin)
    else:
        done = run(project, item.command)
    if item.select is None:
        return real_output(done, project)
    data = json.loads(real_output(subprocess.CompletedProcess(done.args, 0, done.stdout, ""), project))
    return json.dumps(_select(data, item.select), indent=2, ensure_ascii=False) + "\n"


def test_every_output_block_says_what_prints_it():
    assert UNKNOWN == [], "an output block needs `$ COMMAND` lines or a <!-- doc-output: ... --> marker"
    shown = {item.doc for item in SHOWN}
    for doc in ("README.md", "docs/tutorial.md", "docs/zh/tutorial.md", "docs/output-formats.md", "docs/pytest.md"):
        assert doc in shown, doc


@pytest.mark.parametrize("item", SHOWN, ids=[item.key for item in SHOWN])
def test_shown_output_is_real(project, item):
    assert _comparable(item.expected) == _comparable(actual(project, item)), (
        f"stale: {item.key}; python -m tests.test_docs_commands --update writes the real output"
    )


def update(project: Path, docs: list[Path] | None = None) -> list[str]:
    """Write the real output of every stale shown block into its doc; returns what changed."""
    changed = []
    for path in docs or SHOWN_DOCS:
        doc = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        items = [item for item in shown_outputs([path])[0] if item.doc == doc]
        for item in sorted(items, key=lambda item: item.start, reverse=True):
            real = actual(project, item)
            if _comparable(item.expected) != _comparable(real):
                text = text[: item.start] + real.rstrip("\n") + "\n" + text[item.end :]
                changed.append(item.key)
        path.write_text(text, encoding="utf-8")
    return changed


if __name__ == "__main__":
    # python -m tests.test_docs_commands --update: the shown outputs, regenerated from the tool
    import tempfile

    if sys.argv[1:2] != ["--update"]:
        sys.exit("usage: python -m tests.test_docs_commands --update [DOC.md...]")

    class _Factory:
        def mktemp(self, name):
            return Path(tempfile.mkdtemp(prefix=f"{name}-"))

    scratch = project.__wrapped__(_Factory())
    for key in update(scratch, [ROOT / doc for doc in sys.argv[2:]] or None):
        print(f"updated {key}")
