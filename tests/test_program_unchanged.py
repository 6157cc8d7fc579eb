"""What runs under ``python train.py ARGS`` runs the same under ``gradcheck train.py -- ARGS``,
up to where gradcheck stops it, and a stop really stops it (issue 35).

Each script writes what it saw (argv, its ``__main__`` namespace, the environment, its
progress) to a file in ``$PROBE``, a folder beside its project (a check keeps writes in the
project off the disk); the same script run by plain ``python`` in a subprocess is the
reference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _probe(project: Path) -> Path:
    """Where the scripts of ``project`` write what they saw: beside it, not in it."""
    probe = project.parent / f"{project.name}-probe"
    probe.mkdir(exist_ok=True)
    return probe


def _python(script: Path, *args: str, cwd: Path, python: str = sys.executable, flags: tuple = ()):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PROBE=str(_probe(cwd)))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # tests/conftest.py sets it for the whole session
    return subprocess.run(
        [python, *flags, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _gradcheck(*args: str, cwd: Path, flags: tuple = ()):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PROBE=str(_probe(cwd)))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return subprocess.run(
        [sys.executable, *flags, "-m", "gradcheck", "--format", "json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _seen(directory: Path) -> object:
    path = _probe(directory) / "seen.json"
    seen = json.loads(path.read_text())
    path.unlink()
    return seen


# -- the script's arguments, path, namespace, environment, interpreter flags -------------------

ARGV = """\
import json, sys
json.dump(sys.argv[1:], open(__import__("os").path.join(__import__("os").environ["PROBE"], "seen.json"), "w"))
"""


def test_a_double_dash_among_the_scripts_arguments_reaches_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ARGV)
    args = ("a", "--", "b", "--epochs", "1", "--")
    _python(script, *args, cwd=tmp_path)
    expected = _seen(tmp_path)
    assert expected == ["a", "--", "b", "--epochs", "1", "--"]
    _gradcheck("train.py", "--", *args, cwd=tmp_path)
    assert _seen(tmp_path) == expected


def test_the_child_keeps_every_argument_after_the_first_double_dash():
    from gradcheck.trace.run.child import _parse

    args = _parse(["--result", "r.json", "--steps", "2", "--", "t.py", "a", "--", "--steps", "b"])
    assert (args.result, args.steps, args.path, args.script_args) == ("r.json", 2, "t.py", ["a", "--", "--steps", "b"])


SIBLING = """\
import json, os, sys
import helper
json.dump([helper.VALUE, sys.path[0], __file__, sys.argv[0]], open(__import__("os").path.join(__import__("os").environ["PROBE"], "seen.json"), "w"))
"""


def test_a_script_reached_through_a_symlink_imports_its_sibling(tmp_path):
    real = tmp_path / "project"
    real.mkdir()
    (real / "train.py").write_text(SIBLING)
    (real / "helper.py").write_text("VALUE = 42\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "train.py").symlink_to(real / "train.py")
    _python(Path("runs/train.py"), cwd=tmp_path)
    expected = _seen(tmp_path)
    assert expected == [42, str(real), str(tmp_path / "runs" / "train.py"), "runs/train.py"]
    _gradcheck("runs/train.py", cwd=tmp_path)
    assert _seen(tmp_path) == expected


NAMESPACE = '''\
"""The script's docstring."""
NAMESPACE = dict(globals())
answer: int = 42
import builtins, json, sys
loader = NAMESPACE["__loader__"]
shape = {
    "keys": list(NAMESPACE),
    "types": {k: type(v).__name__ for k, v in NAMESPACE.items()},
    "values": {k: NAMESPACE[k] for k in ("__name__", "__doc__", "__package__", "__spec__", "__file__", "__cached__")},
    "builtins_is_module": NAMESPACE["__builtins__"] is builtins,
    "len": __builtins__.len([1, 2]),
    "annotations": {k: v.__name__ for k, v in __annotations__.items()},
    "loader": [type(loader).__name__, loader.name, loader.path],
    "registered": sys.modules["__main__"].__dict__ is globals(),
    "main_module_file": getattr(sys.modules["__main__"], "__file__", None),
}
json.dump(shape, open(__import__("os").path.join(__import__("os").environ["PROBE"], "seen.json"), "w"), sort_keys=True)
'''


def _pythons() -> list[str]:
    """The Python 3.10-3.13 interpreters of this machine (each is its own version's reference)."""
    found = []
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in ("3.10", "3.11", "3.12", "3.13"):
        candidates = [shutil.which(f"python{minor}"), *sorted(pyenv_root.glob(f"{minor}.*/bin/python{minor}"))]
        for candidate in candidates:
            if candidate and subprocess.run([str(candidate), "-c", "pass"], capture_output=True).returncode == 0:
                found.append(str(candidate))
                break
    return found


def test_the_main_namespace_has_pythons_shape_on_every_version(tmp_path):
    """``run_file`` itself imports no TensorFlow: it runs on each interpreter, TensorFlow or not."""
    script = tmp_path / "train.py"
    script.write_text(NAMESPACE)
    pythons = _pythons() or [sys.executable]
    for python in pythons:
        _python(script, cwd=tmp_path, python=python)
        expected = _seen(tmp_path)
        assert expected["builtins_is_module"] and expected["registered"], (python, expected)
        run = "from gradcheck.trace.run.runner import run_file; run_file('train.py')"
        proc = subprocess.run(
            [python, "-c", run],
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT), PROBE=str(_probe(tmp_path))),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        assert _seen(tmp_path) == expected, python


def test_the_cli_runs_the_script_with_pythons_namespace(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(NAMESPACE)
    _python(script, cwd=tmp_path)
    expected = _seen(tmp_path)
    _gradcheck("train.py", cwd=tmp_path)
    assert _seen(tmp_path) == expected


def test_a_script_error_keeps_its_line_and_the_user_frames(run_script):
    result = run_script("import tensorflow as tf\n\nx = 1\nraise ValueError('bad shape')\n")
    assert result.error.code == "GC901"
    assert result.error.message == "the script raised ValueError: bad shape (at " + result.path + ":4)"


ENVIRONMENT = """\
import json, os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
json.dump(os.environ["TF_CPP_MIN_LOG_LEVEL"], open(__import__("os").path.join(__import__("os").environ["PROBE"], "seen.json"), "w"))
"""


def test_the_script_sets_its_own_tensorflow_log_level(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ENVIRONMENT)
    _python(script, cwd=tmp_path)
    assert _seen(tmp_path) == "0"
    _gradcheck("train.py", cwd=tmp_path)
    assert _seen(tmp_path) == "0"


FLAGS = """\
import json, sys
json.dump([sys.warnoptions, sys._xoptions, list(sys.flags)], open(__import__("os").path.join(__import__("os").environ["PROBE"], "seen.json"), "w"))
"""


def test_interpreter_flags_reach_the_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(FLAGS)
    flags = ("-W", "error", "-W", "ignore::DeprecationWarning:click", "-X", "utf8", "-b", "-O")
    _python(script, cwd=tmp_path, flags=flags)
    expected = _seen(tmp_path)
    assert expected[0][:2] == ["error", "ignore::DeprecationWarning:click"]
    _gradcheck("train.py", cwd=tmp_path, flags=flags)
    assert _seen(tmp_path) == expected


# -- the end of the program: atexit -------------------------------------------------------------

ATEXIT = """\
import atexit, os
import keras
import numpy as np
import tensorflow as tf

open(__import__("os").path.join(__import__("os").environ["PROBE"], "train.lock"), "w").close()
atexit.register(os.remove, __import__("os").path.join(__import__("os").environ["PROBE"], "train.lock"))

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
for step in range({steps}):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(tf.ones((2, 4))) ** 2)
    tape.gradient(loss, model.trainable_variables)
"""


@pytest.mark.parametrize("steps", [1, 5], ids=["ended", "stopped"])
def test_the_scripts_atexit_handlers_run_in_the_child(tmp_path, steps):
    script = tmp_path / "train.py"
    script.write_text(ATEXIT.format(steps=steps))
    proc = _gradcheck("train.py", cwd=tmp_path)
    (record,) = json.loads(proc.stdout)["files"]
    assert record["status"] == "checked" and record["steps_checked"] == 1, record
    assert not (_probe(tmp_path) / "train.lock").exists()


def test_in_process_the_hosts_atexit_handlers_do_not_run(run_script, tmp_path, monkeypatch):
    import atexit

    monkeypatch.setenv("PROBE", str(_probe(tmp_path)))
    os.chdir(tmp_path)
    try:
        result = run_script(ATEXIT.format(steps=5))
    finally:
        atexit.unregister(os.remove)
        os.chdir(ROOT)
    assert result.steps_checked == 1
    assert (_probe(tmp_path) / "train.lock").exists()


# -- a stop is a stop -----------------------------------------------------------------------------

PRELUDE = """\
import sys, threading, time
import keras
import numpy as np
import tensorflow as tf

def log(line):
    with open(__import__("os").path.join(__import__("os").environ["PROBE"], "progress.log"), "a") as fh:
        fh.write(line + "\\n")

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="head")])
x = tf.constant(np.random.rand(8, 4).astype("float32"))

def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(x)))
    tape.gradient(loss, model.trainable_variables)
"""

BARE_EXCEPT_PER_EPOCH = """\
def train_epoch(epoch):
    for i in range(3):
        step()
        log(f"step {epoch}.{i}")

for epoch in range(30):
    try:
        train_epoch(epoch)
    except:
        log(f"swallowed {epoch}")
log("emergency save")
"""

FIT_PER_EPOCH = """\
step()  # the prelude's gradient, reached first: the fit below is the file's last training
net = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(3, name="body"), keras.layers.Lambda(tf.round), keras.layers.Dense(1)]
)
net.compile(optimizer="sgd", loss="mse")
for epoch in range(30):
    try:
        net.fit(np.ones((16, 4), "float32"), np.ones((16, 1), "float32"), batch_size=8, verbose=0)
        log(f"epoch {epoch}")
    except BaseException:
        log(f"swallowed {epoch}")
log("emergency save")
"""

WHILE_PASS = """\
n = 0
while n < 40:
    try:
        step()
        n += 1
    except BaseException:
        pass
log(f"after the loop {n}")
"""

FINALLY_SAVES = """\
class Checkpoint:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        log("checkpoint closed")

try:
    with Checkpoint():
        for i in range(30):
            step()
            log(f"step {i}")
finally:
    log("finally save")
log("after finally")
"""

WORKER_JOINED = """\
def train():
    for i in range(5):
        try:
            step()
        except:
            log("worker swallowed")
        log(f"step {i}")

worker = threading.Thread(target=train)
worker.start()
worker.join()
log("after join")
"""

WORKER_NOT_JOINED = """\
import os

def train():
    for i in range(5):
        step()
        log(f"step {i}")
    open("trained", "w").close()

threading.Thread(target=train).start()
try:
    while not os.path.exists("trained"):  # the main thread goes on with its own work
        time.sleep(0.01)
except:
    log("main swallowed")
log("main end")
"""


def _progress(tmp_path: Path) -> list[str]:
    path = _probe(tmp_path) / "progress.log"
    lines = path.read_text().splitlines() if path.exists() else []
    if path.exists():
        path.unlink()
    return lines


@pytest.mark.parametrize(
    ("body", "under_python", "under_gradcheck"),
    [
        pytest.param(
            BARE_EXCEPT_PER_EPOCH,
            [f"step {e}.{i}" for e in range(30) for i in range(3)] + ["emergency save"],
            ["step 0.0"],
            id="bare-except-per-epoch",
        ),
        pytest.param(
            FIT_PER_EPOCH, [f"epoch {e}" for e in range(30)] + ["emergency save"], [], id="fit-per-epoch-except"
        ),
        pytest.param(WHILE_PASS, ["after the loop 40"], [], id="while-except-baseexception-pass"),
        pytest.param(
            FINALLY_SAVES,
            [f"step {i}" for i in range(30)] + ["checkpoint closed", "finally save", "after finally"],
            ["step 0", "checkpoint closed", "finally save"],
            id="finally-runs-then-stops",
        ),
        pytest.param(
            WORKER_JOINED, [f"step {i}" for i in range(5)] + ["after join"], ["step 0"], id="worker-thread-joined"
        ),
        pytest.param(
            WORKER_NOT_JOINED, [f"step {i}" for i in range(5)] + ["main end"], ["step 0"], id="worker-thread-not-joined"
        ),
    ],
)
def test_a_stop_the_script_catches_still_stops_it(tmp_path, body, under_python, under_gradcheck):
    script = tmp_path / "train.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    proc = _python(script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _progress(tmp_path) == under_python
    (tmp_path / "trained").unlink(missing_ok=True)
    proc = _gradcheck("-v", "train.py", cwd=tmp_path)
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, (record, proc.stderr[-3000:])
    # the checked steps' findings, one a training (in a worker thread the eager recorder sees
    # less: GC108)
    assert set(f["code"] for f in record["findings"]) in ({"GC102"}, {"GC108"}), record
    assert record["steps_checked"] == 1
    assert _progress(tmp_path) == under_gradcheck
    assert proc.returncode == 1


def test_in_process_the_stop_leaves_no_trace_function_behind(run_script):
    before = (sys.gettrace(), sys.getprofile())
    result = run_script(PRELUDE + BARE_EXCEPT_PER_EPOCH.replace("log(", "print("))
    assert [f.code for f in result.findings] == ["GC102"]
    assert (sys.gettrace(), sys.getprofile()) == before


RESTOP = """\
import os, sys, threading, time
from gradcheck.trace.record.errors import stop_program

def log(line):
    with open(__import__("os").path.join(__import__("os").environ["PROBE"], "progress.log"), "a") as fh:
        fh.write(line + "\\n")

calls = 0
def train_step():  # gradcheck's hooks raise the stop at the second step: this does as they do
    global calls
    calls += 1
    if calls > 1:
        raise stop_program()
    log("step")

class Checkpoint:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        log("closed")

def epochs():
    for epoch in range(30):
        try:
            train_step()
        except:
            log("swallowed")
    log("emergency save")

def loop():
    n = 0
    while n < 40:
        try:
            train_step()
            n += 1
        except BaseException:
            pass
    log("after loop")

def with_finally():
    try:
        with Checkpoint():
            for i in range(30):
                train_step()
    finally:
        log("finally")
    log("after finally")

def worker():
    thread = threading.Thread(target=epochs)
    thread.start()
    thread.join()
    log("after join")

def worker_not_joined():
    def train():
        for i in range(5):
            train_step()
        open("trained", "w").close()
    threading.Thread(target=train).start()
    try:
        while not os.path.exists("trained"):
            time.sleep(0.01)
    except:
        log("main swallowed")
    log("main end")

def main_ends():
    threading.Thread(target=epochs).start()  # python waits for it before it exits

scenarios = {"epochs": epochs, "loop": loop, "finally": with_finally, "worker": worker, "free": worker_not_joined}
scenarios["ends"] = main_ends
scenarios[sys.argv[1]]()
"""

RUN_RESTOP = """\
import sys
from gradcheck.trace.run.runner import run_file
before = (sys.gettrace(), sys.getprofile(), __import__("threading").excepthook)
result = run_file("train.py", argv=[sys.argv[1]])
assert (sys.gettrace(), sys.getprofile(), __import__("threading").excepthook) == before
print(result.error.code)
"""


@pytest.mark.parametrize(
    ("scenario", "progress"),
    [
        ("epochs", ["step"]),
        ("loop", ["step"]),
        ("finally", ["step", "closed", "finally"]),
        ("worker", ["step"]),
        ("free", ["step"]),
        ("ends", ["step"]),
    ],
)
def test_the_restop_on_every_python_version(tmp_path, scenario, progress):
    """The re-stop relies on how each version traces (3.12+ through sys.monitoring, 3.11's
    eval breaker): the same program, stopped by the same helper the hooks use, on each."""
    (tmp_path / "train.py").write_text(RESTOP)
    for python in _pythons() or [sys.executable]:
        proc = subprocess.run(
            [python, "-c", RUN_RESTOP, scenario],
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT), PROBE=str(_probe(tmp_path))),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.stdout.strip() == "GC902", (python, proc.stderr[-2000:])  # no gradient: the stop was the helper's
        assert _progress(tmp_path) == progress, python
        (tmp_path / "trained").unlink(missing_ok=True)


PROCESS_STATE = """\
import json, logging, os, signal, sys, threading, warnings

SEEN = {}


def state(when):
    seen = {
        "warnings": [repr(f) for f in warnings.filters],
        "loggers": {
            name: [logger.level, [type(h).__name__ for h in logger.handlers], logger.propagate, logger.disabled]
            for name, logger in (
                (n, logging.getLogger(n)) for n in ("", "tensorflow", "absl", "keras", "h5py", "py.warnings")
            )
        },
        "logging_disabled": logging.root.manager.disable,
        "signals": {n: repr(signal.getsignal(getattr(signal, n))) for n in ("SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGHUP", "SIGPIPE", "SIGALRM")},
        "sys_path": sys.path,
        "threads": sorted(t.name for t in threading.enumerate()),
        "hooks": [repr(sys.excepthook), repr(sys.displayhook), repr(sys.gettrace()), repr(sys.getprofile())],
        "limits": [sys.getrecursionlimit(), sys.getswitchinterval(), sys.get_int_max_str_digits()],
        "cwd": os.getcwd(),
        "environ": sorted(os.environ),
    }
    if "tensorflow" in sys.modules:
        tf = sys.modules["tensorflow"]
        from tensorflow.python.framework import config

        seen["tf"] = [
            tf.config.get_soft_device_placement(),
            tf.config.functions_run_eagerly(),
            tf.executing_eagerly(),
            config.is_op_determinism_enabled(),
            tf.config.experimental.tensor_float_32_execution_enabled(),
            tf.debugging.get_log_device_placement(),
            tf.config.threading.get_inter_op_parallelism_threads(),
            tf.config.threading.get_intra_op_parallelism_threads(),
            sorted(tf.config.optimizer.get_experimental_options().items()),
            tf.config.optimizer.get_jit(),
            tf.get_logger().level,
            tf.keras.backend.floatx(),
            tf.keras.mixed_precision.global_policy().name,
        ]
    SEEN[when] = seen


def dump():
    state("at exit")
    json.dump(SEEN, open(os.path.join(os.environ["PROBE"], "seen.json"), "w"))


state("before tensorflow")
import numpy as np
import tensorflow as tf

state("after tensorflow")
__import__("atexit").register(dump)
w = tf.Variable(tf.ones([3, 1]))
with tf.GradientTape() as tape:
    state("in the tape")
    loss = tf.reduce_sum(np.ones((4, 3), np.float32) @ w)
tape.gradient(loss, w)
"""


def test_the_process_state_the_script_sees_is_pythons(tmp_path):
    """Warnings filters, logging, signal handlers, ``sys.path``, threads, interpreter hooks and
    limits, the environment, ``tf.config`` and Keras's settings: before TensorFlow, after it,
    inside the checked step and at the end, as under python. (What differs on purpose:
    ``sys.meta_path`` holds the import hook, ``sys.dont_write_bytecode`` keeps ``__pycache__``
    out of the project, and the child leads its own process group, killed as one.)"""
    script = tmp_path / "train.py"
    script.write_text(PROCESS_STATE)
    _python(script, cwd=tmp_path)
    expected = _seen(tmp_path)
    assert list(expected) == ["before tensorflow", "after tensorflow", "in the tape", "at exit"]
    proc = _gradcheck("train.py", cwd=tmp_path)
    assert json.loads(proc.stdout)["files"][0]["steps_checked"] == 1, proc.stdout + proc.stderr
    assert _seen(tmp_path) == expected
