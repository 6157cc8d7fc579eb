"""A check imports nothing the program would not (issue trust).

A project may hold modules named like optional dependencies of TensorFlow and Keras (a stub
``pandas`` a benchmark left, a ``PIL`` folder of its own): ``python train.py`` imports them
first, as the script's directory is first on ``sys.path``. Under gradcheck the same program
must import the same modules: what gradcheck imports (or makes TensorFlow and Keras import,
Keras 3 in a tf_keras program above all, whose data adapters probe ``pandas.Series``) runs
code the program never runs, and a correct program then "crashes" under gradcheck only.

Each program writes, at its end (``atexit``: under gradcheck, where the check stopped it),
what it saw before training (the stubs it imported, which Keras ``tf.keras`` is, its first
loss from seeded weights) and ``sys.modules``, to ``$PROBE`` beside the project; the same
program under plain ``python`` in a subprocess is the reference.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

HAS_TF_KERAS = importlib.util.find_spec("tf_keras") is not None

#: Stubs both Kerases let a program have beside it (``python train.py`` runs with them).
STUBS = ("scipy", "PIL", "h5py", "sklearn", "matplotlib", "cv2", "tqdm", "IPython", "torch")
#: Keras 3 probes ``jax`` and ``pandas`` when present (``python`` fails with these stubs too):
#: only a tf_keras program may have them; tf_keras's own ``fit`` probes ``pandas``.
TF_KERAS_STUBS = (*STUBS, "jax", "pandas")
TF_KERAS_FIT_STUBS = (*STUBS, "jax")

#: Modules gradcheck's child has that the program's run has not, beyond ``gradcheck.*``:
#: ``runpy`` runs the child (``python -m gradcheck.trace.run.child``).
ALLOWED = {"runpy"}

PROGRAM = """\
{legacy}import atexit, json, os, sys
import {stubs}
import numpy as np
import tensorflow as tf

SEEN = {{}}


def seen():
    SEEN["modules"] = sorted(sys.modules)
    with open(os.path.join(os.environ["PROBE"], os.environ["TAG"] + ".json"), "w") as fh:
        json.dump(SEEN, fh)


atexit.register(seen)
here = os.path.dirname(os.path.abspath(__file__))
SEEN["stubs"] = {{name: os.path.relpath(sys.modules[name].__file__, here) for name in "{stubs}".split(", ")}}
SEEN["keras"] = tf.keras.__name__
tf.keras.utils.set_random_seed(0)  # Python's, NumPy's and TensorFlow's: Keras's initializers draw from them
rng = np.random.default_rng(0)
x = rng.random((32, 3), dtype=np.float32)
y = rng.random((32, 1), dtype=np.float32)
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
SEEN["first_loss"] = float(tf.reduce_mean((model(x) - y) ** 2))
{train}"""

LOOP = """\
opt = tf.keras.optimizers.Adam()
for _ in range(2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""

FUNCTION = """\
opt = tf.keras.optimizers.Adam()


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for _ in range(2):
    step(x, y)
"""

FIT = """\
model.compile(optimizer="adam", loss="mse")
model.fit(x, y, epochs=2, batch_size=8, verbose=0)
"""

LEGACY = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"  # the program picks tf_keras itself\n'


def _project(tmp_path: Path, stubs: tuple[str, ...], train: str, legacy: str = "") -> Path:
    project = tmp_path / "project"
    for name in stubs:
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f'"""The project\'s own {name}: an empty stub."""\n')
    source = PROGRAM.format(legacy=legacy, stubs=", ".join(stubs), train=train)
    (project / "train.py").write_text(source)
    (tmp_path / "probe").mkdir()
    return project


def _run(project: Path, tag: str, *command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(ROOT), PROBE=str(project.parent / "probe"), TAG=tag, **(env or {}))
    return subprocess.run(
        [sys.executable, *command], cwd=project, env=full, capture_output=True, text=True, timeout=600
    )


def _seen(project: Path, tag: str) -> dict:
    return json.loads((project.parent / "probe" / f"{tag}.json").read_text())


def _modules(names: list[str]) -> set[str]:
    """Autograph names the modules it generates at random: one name for all of them."""
    return {"__autograph_generated_file" if n.startswith("__autograph_generated_file") else n for n in names}


def _same_program(project: Path, env: dict | None = None) -> None:
    python = _run(project, "python", "train.py", env=env)
    assert python.returncode == 0, python.stderr[-3000:]
    checked = _run(project, "gradcheck", "-m", "gradcheck", "--format", "json", "train.py", env=env)
    record = json.loads(checked.stdout)["files"][0]
    assert (record["status"], record["error"], record["findings"]) == ("checked", None, []), checked.stdout
    assert record["steps_checked"] >= 1
    expected, got = _seen(project, "python"), _seen(project, "gradcheck")
    assert {k: v for k, v in got.items() if k != "modules"} == {k: v for k, v in expected.items() if k != "modules"}
    extra = _modules(got["modules"]) - _modules(expected["modules"])
    extra = {m for m in extra if m != "gradcheck" and not m.startswith("gradcheck.")} - ALLOWED
    assert not extra, f"gradcheck imported what the program does not: {sorted(extra)[:40]}"


@pytest.mark.parametrize("train", [LOOP, FUNCTION, FIT], ids=["loop", "function", "fit"])
def test_keras3_program_with_stub_dependencies_runs_as_under_python(tmp_path, train):
    _same_program(_project(tmp_path, STUBS, train))


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
@pytest.mark.parametrize("train", [LOOP, FUNCTION], ids=["loop", "function"])
def test_tf_keras_program_with_a_stub_pandas_never_gets_keras3(tmp_path, train):
    """progF's notebook: tf_keras chosen by the program, a stub ``pandas`` beside it. Keras 3
    (which gradcheck used to import for its classes) reads ``pandas.Series`` on import."""
    _same_program(_project(tmp_path, TF_KERAS_STUBS, train, legacy=LEGACY))


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_tf_keras_fit_with_stub_dependencies_runs_as_under_python(tmp_path):
    _same_program(_project(tmp_path, TF_KERAS_FIT_STUBS, FIT), env={"TF_USE_LEGACY_KERAS": "1"})


def test_a_stub_that_breaks_the_program_under_python_too_is_the_scripts_error(tmp_path):
    """The look-alike: Keras 3 itself reads ``pandas.Series`` when a ``pandas`` is importable,
    under python as under gradcheck: that crash is the script's, at its import line."""
    project = _project(tmp_path, ("pandas",), LOOP)
    python = _run(project, "python", "train.py")
    assert python.returncode != 0 and "has no attribute 'Series'" in python.stderr
    checked = _run(project, "gradcheck", "-m", "gradcheck", "--format", "json", "train.py")
    error = json.loads(checked.stdout)["files"][0]["error"]
    assert error["code"] == "GC901"
    assert error["message"].startswith("the script raised AttributeError: module 'pandas' has no attribute 'Series'")
    line = python.stderr.rsplit('train.py", line ', 1)[1].split(",")[0]  # where python's traceback left the script
    assert error["message"].endswith(f"(at train.py:{line})")
    assert checked.returncode == 2


#: gradcheck's child with a fault in its own hook installation (what an ``h5py`` stub did
#: to the sandbox's wrapping of ``h5py.File``): the only way to make gradcheck itself fail.
BROKEN_CHILD = """\
from gradcheck.trace.run import child, sandbox


def libraries_ready():
    raise AttributeError("module 'h5py' has no attribute 'File'")


sandbox.libraries_ready = libraries_ready
child.main()
"""

CATCHES_ITS_IMPORT = """\
import os, sys
try:
    import tensorflow as tf
except Exception as error:  # a script that carries on without TensorFlow
    tf = None
print("carried on", file=sys.stderr)
w = tf.Variable(1.0)
with tf.GradientTape() as tape:
    loss = w * w
tape.gradient(loss, w)
"""


def test_gradchecks_own_failure_is_not_the_scripts_crash(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(CATCHES_ITS_IMPORT)
    (tmp_path / "broken_child.py").write_text(BROKEN_CHILD)
    result = tmp_path / "result.json"
    proc = _run(project, "x", str(tmp_path / "broken_child.py"), "--result", str(result), "--", "train.py")
    record = json.loads(result.read_text())
    assert record["error"]["code"] == "GC901"
    message = record["error"]["message"]
    assert message.startswith("gradcheck failed, not the script: installing its hooks at the script's import of ")
    assert "AttributeError: module 'h5py' has no attribute 'File' (in broken_child.py:5)" in message
    assert "the script raised" not in message and "train.py" not in message
    assert "carried on" not in proc.stderr  # the script's `except Exception` did not swallow it
    assert record["steps_checked"] == 0 and record["findings"] == []


def test_the_same_script_without_the_fault_is_checked(tmp_path):
    """The twin of the test above: the unbroken child checks the same script."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(CATCHES_ITS_IMPORT)
    result = tmp_path / "result.json"
    _run(project, "x", "-m", "gradcheck.trace.run.child", "--result", str(result), "--", "train.py")
    record = json.loads(result.read_text())
    assert record["error"] is None and record["steps_checked"] == 1


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_keras_classes_are_none_until_the_program_imports_keras():
    """``_tf`` names Keras 3's classes only from a Keras 3 already imported (a tf_keras
    program's process never gets Keras 3 from gradcheck)."""
    code = textwrap.dedent(
        """
        import os, sys
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import tensorflow
        from gradcheck.trace.record import _tf
        print(_tf.KerasVariable, _tf.KerasOptimizer, [c.__module__ for c in _tf.keras_model_classes()])
        print("keras" in sys.modules)
        import keras
        print(_tf.KerasVariable.__name__, _tf.KerasOptimizer.__name__)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True
    )
    assert proc.stdout.splitlines() == [
        "None None ['tf_keras.src.engine.training']",
        "False",
        "Variable BaseOptimizer",
    ], proc.stderr[-2000:]


LATE_KERAS3 = """\
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow as tf
import keras  # Keras 3, imported after tf_keras: its classes are hooked from here on

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    h = model(x)
    loss = tf.reduce_mean({loss})
grads = tape.gradient(loss, model.trainable_variables)
keras.optimizers.Adam().apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
@pytest.mark.parametrize(
    ("loss", "expected"),
    [("tf.cast(tf.argmax(h, axis=1), tf.float32)", [("GC101", 12)]), ("h * h", [])],
    ids=["argmax", "correct-twin"],
)
def test_keras3_imported_after_tf_keras_is_hooked_then(tmp_path, loss, expected):
    """gradcheck imports no Keras 3 for a tf_keras program; when the program imports it
    itself, later, the hooks go in again over its classes (``runner._Tracer``) and its models
    are checked as Keras 3's (variables named by their paths), a correct twin silent. (The
    cut is found through the tape alone too: this guards the late import, not each hook.)"""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(LATE_KERAS3.format(loss=loss))
    checked = _run(project, "gradcheck", "-m", "gradcheck", "--format", "json", "train.py")
    record = json.loads(checked.stdout)["files"][0]
    assert record["error"] is None and record["steps_checked"] == 1, checked.stdout
    assert [(f["code"], f["line"]) for f in record["findings"]] == expected
    if expected:
        assert "sequential/dense/kernel" in record["findings"][0]["variables"]
