"""Nothing on the user's disk is created, changed or deleted during a check (issue 35).

The CLI tests run the real ``gradcheck`` on scripts written into a project directory that
already holds files of known content, and compare the whole tree before and after: every
file byte-identical, no new file or folder. The first tests drive ``Sandbox`` itself on a
real filesystem (no TensorFlow).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from gradcheck.trace.run.sandbox import Refused, Sandbox
from tests.conftest import run_cli

HAS_TF_KERAS = __import__("importlib.util").util.find_spec("tf_keras") is not None
SEEDED = ("final.keras", "w.weights.h5", "log.csv", "metrics.json", "old.txt", "ckpts/checkpoint", "olddir/a.txt")


def _tree(root: Path) -> dict[str, str]:
    """Every file and folder under ``root``: a file's sha256, a folder's ``dir``."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _project(tmp_path: Path, script: str, seeds: dict[str, bytes] | None = None) -> Path:
    project = tmp_path / "project"
    for name in SEEDED:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(f"the user's {name}\n")
    for name, data in (seeds or {}).items():
        (project / name).write_bytes(data)
    (project / "train.py").write_text(textwrap.dedent(script))
    return project


# -- the sandbox itself ------------------------------------------------------------------------


@pytest.fixture
def box(tmp_path):
    """A sandbox protecting ``tmp_path/project`` (under the temp directory, as a project in
    /tmp is), removed at the end."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "kept.txt").write_text("original\n")
    (project / "dir").mkdir()
    (project / "dir" / "inner.txt").write_text("inner\n")
    cwd = os.getcwd()
    os.chdir(project)
    sandbox = Sandbox(protect=[str(project)])
    sandbox.install()
    try:
        yield sandbox, project
    finally:
        sandbox.remove()
        os.chdir(cwd)


def test_a_write_goes_to_the_shadow_and_reads_follow_it(box):
    sandbox, project = box
    before = _tree(project)
    with open("kept.txt", "w") as fh:
        fh.write("new\n")
    Path("new.txt").write_text("made\n")  # pathlib goes through io.open
    assert open("kept.txt").read() == "new\n"
    assert Path("new.txt").read_text() == "made\n"
    assert os.path.exists("new.txt") and sorted(os.listdir(".")) == ["dir", "kept.txt", "new.txt"]
    with open("kept.txt", "a") as fh:  # an append starts from what the check sees
        fh.write("more\n")
    assert open("kept.txt").read() == "new\nmore\n"
    sandbox.remove()
    assert _tree(project) == before
    assert [(r.target, r.action) for r in sandbox.records] == [  # one record per call site
        (str(project / "kept.txt"), "written"),
        (str(project / "new.txt"), "written"),
        (str(project / "kept.txt"), "written"),
    ]
    assert sandbox.records[0].call == 'open("kept.txt", "w")'


def test_an_append_keeps_the_original_content(box):
    sandbox, project = box
    with open("kept.txt", "a") as fh:
        fh.write("added\n")
    assert open("kept.txt").read() == "original\nadded\n"
    sandbox.remove()
    assert (project / "kept.txt").read_text() == "original\n"


def test_deleting_and_moving_user_files_only_looks_done(box):
    sandbox, project = box
    before = _tree(project)
    os.remove("kept.txt")
    assert not os.path.exists("kept.txt") and "kept.txt" not in os.listdir(".")
    with pytest.raises(FileNotFoundError):
        open("kept.txt")
    with pytest.raises(FileNotFoundError):
        os.remove("kept.txt")
    os.rename("dir/inner.txt", "moved.txt")
    assert open("moved.txt").read() == "inner\n" and not os.path.exists("dir/inner.txt")
    shutil.rmtree("dir")
    assert not os.path.isdir("dir")
    os.makedirs("made/deeper")
    assert os.path.isdir("made/deeper")
    Path("made/deeper/f").write_text("x")
    shutil.rmtree("made")  # the check's own folder: really removed, from the shadow
    assert not os.path.exists("made")
    assert sorted(p.relative_to(project).as_posix() for p in project.rglob("*")) == ["moved.txt"]
    sandbox.remove()
    assert _tree(project) == before
    assert [r.action for r in sandbox.records] == ["deleted", "written", "moved", "deleted", "created", "written"]


def test_a_write_that_bypasses_the_redirect_is_refused(box):
    import _io

    sandbox, project = box
    with pytest.raises(Refused) as raised:
        _io.FileIO(str(project / "kept.txt"), "w")
    assert "gradcheck" in str(raised.value)
    with pytest.raises(PermissionError):
        os.unlink.__wrapped__(str(project / "kept.txt"))  # the real os.unlink, bound before the check
    sandbox.remove()
    assert (project / "kept.txt").read_text() == "original\n"
    assert [r.action for r in sandbox.records] == ["refused", "refused"]


def test_the_temp_directory_and_allowed_places_are_written_for_real(box, tmp_path):
    sandbox, _project_dir = box
    outside = tmp_path / "elsewhere.txt"  # in the temp directory, outside the project
    outside.write_text("real")
    sandbox.remove()
    assert outside.read_text() == "real"  # on the disk, not in the shadow
    assert sandbox.records == []


def test_remove_puts_everything_back(tmp_path):
    saved_open, saved_remove, saved_bytecode = builtins.open, os.remove, sys.dont_write_bytecode
    sandbox = Sandbox(protect=[str(tmp_path)])
    sandbox.install()
    assert builtins.open is not saved_open and sys.dont_write_bytecode
    sandbox.remove()
    assert builtins.open is saved_open and os.remove is saved_remove
    assert sys.dont_write_bytecode == saved_bytecode
    (tmp_path / "after.txt").write_text("the audit hook is inert once the check ends")
    os.remove(tmp_path / "after.txt")
    assert not os.path.exists(sandbox.root)


# -- real checks ------------------------------------------------------------------------------

KERAS_FIT = """\
import json, os, shutil
import numpy as np
import keras

x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
callbacks = [
    keras.callbacks.CSVLogger("log.csv"),
    keras.callbacks.ModelCheckpoint("ckpts/step.keras", save_freq=1),
]
model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=callbacks)
model.save("final.keras")
model.save_weights("w.weights.h5")
with open("metrics.json", "w") as fh:
    json.dump({"loss": 0.1}, fh)
np.save("features.npy", x)
os.remove("old.txt")
shutil.rmtree("olddir")
again = keras.models.load_model("final.keras")  # saved in this check: read from the shadow
again.compile("sgd", "mse")
again.fit(x, y, epochs=1, verbose=0)  # a second training, checked too
assert np.load("features.npy").shape == (32, 4) and not os.path.exists("old.txt")
with open(os.environ["SANDBOX_DONE"], "w") as fh:  # outside the project, in the temp directory
    fh.write("ran to the end")
"""


def _run(project: Path, *args: str, env: dict | None = None):
    done = project.parent / "done.txt"
    proc = run_cli(*args, "train.py", cwd=project, env={"SANDBOX_DONE": str(done), **(env or {})})
    return proc, done


def test_a_keras_fit_script_leaves_the_project_as_it_was(tmp_path):
    project = _project(tmp_path, KERAS_FIT)
    before = _tree(project)
    proc, done = _run(project, "--no-color")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stderr
    assert done.read_text() == "ran to the end"
    assert _tree(project) == before
    out = proc.stdout
    assert 'train.py:14: model.save("final.keras"): not written during the check' in out
    assert "train.py:13: model.fit(...): log.csv, ckpts/step.keras not written during the check" in out
    assert 'train.py:15: model.save_weights("w.weights.h5"): not written during the check' in out
    assert "more kept off the disk" in out  # capped: the rest is in --format json


def test_the_json_report_lists_every_call_kept_out(tmp_path):
    project = _project(tmp_path, KERAS_FIT)
    before = _tree(project)
    proc, _done = _run(project, "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = json.loads(proc.stdout)["files"][0]["kept_out"]
    got = {(k["line"], k["target"], k["action"]) for k in kept}
    assert {
        (13, "log.csv", "written"),
        (13, "ckpts/step.keras", "written"),
        (14, "final.keras", "written"),
        (15, "w.weights.h5", "written"),
        (16, "metrics.json", "written"),
        (18, "features.npy", "written"),
        (19, "old.txt", "deleted"),
        (20, "olddir", "deleted"),
    } <= got
    assert all(k["path"] == "train.py" and not k["ended"] for k in kept)
    assert _tree(project) == before


CUSTOM_LOOP = """\
import os
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(0.1)
ckpt = tf.train.Checkpoint(model=model)
manager = tf.train.CheckpointManager(ckpt, "ckpts", max_to_keep=2)
ckpt.restore(manager.latest_checkpoint)
manager.save()
assert manager.latest_checkpoint and ckpt.restore(manager.latest_checkpoint)
ckpt.write("single")
ckpt.read("single")
with tf.io.gfile.GFile("log.csv", "w") as fh:
    fh.write("step,loss")
assert tf.io.gfile.GFile("log.csv").read() == "step,loss"
tf.io.write_file("metrics.json", "{}")
with tf.io.TFRecordWriter("data.tfrecord") as writer:
    writer.write(b"record")
tf.saved_model.save(model, "exported")
tf.saved_model.load("exported")
tf.io.gfile.makedirs("runs/one")
assert tf.io.gfile.isdir("runs/one")
tf.io.gfile.rmtree("olddir")
assert not tf.io.gfile.exists("olddir")
writer = tf.summary.create_file_writer("logs")  # an events file, written by C++
writer.flush()
cached = tf.data.Dataset.range(4).cache("data.cache")
assert list(cached.as_numpy_iterator()) == list(cached.as_numpy_iterator()) == [0, 1, 2, 3]
tf.data.Dataset.range(3).save("saved_data")
assert list(tf.data.Dataset.load("saved_data").as_numpy_iterator()) == [0, 1, 2]
with open(os.environ["SANDBOX_DONE"], "w") as fh:
    fh.write("ran to the end")
x = np.random.rand(8, 4).astype("float32")
y = np.random.rand(8, 1).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    manager.save()
"""


def test_tensorflow_writers_below_python_are_redirected(tmp_path):
    project = _project(tmp_path, CUSTOM_LOOP)
    before = _tree(project)
    proc, done = _run(project, "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert done.read_text() == "ran to the end"
    assert _tree(project) == before
    targets = {(k["line"], k["target"]) for k in json.loads(proc.stdout)["files"][0]["kept_out"]}
    assert {(9, "ckpts"), (13, "single"), (16, "log.csv"), (18, "metrics.json"), (19, "data.tfrecord")} <= targets
    assert {(21, "exported"), (23, "runs"), (27, "logs"), (29, "data.cache"), (31, "saved_data")} <= targets


BACKUP = """\
import os
import numpy as np
import keras

x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.load_weights("w.weights.h5")  # weights a real training saved
model.fit(x, y, epochs=3, verbose=0, callbacks=[keras.callbacks.BackupAndRestore("backup")])
model.save_weights("w.weights.h5")
model.save("final.keras")
with open(os.environ["SANDBOX_DONE"], "w") as fh:
    fh.write("ran to the end")
model.fit(x, y, epochs=1, verbose=0)  # a second training: the check runs on to it
"""


@pytest.fixture(scope="module")
def trained_weights(tmp_path_factory) -> bytes:
    """A real ``.weights.h5`` of the BACKUP model, as an earlier training left it."""
    path = tmp_path_factory.mktemp("weights") / "w.weights.h5"
    code = (
        "import sys, keras\n"
        "m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "m.save_weights(sys.argv[1])\n"
    )
    import subprocess

    subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True)
    return path.read_bytes()


def test_load_weights_fit_save_weights_and_backup_and_restore(tmp_path, trained_weights):
    project = _project(tmp_path, BACKUP, seeds={"w.weights.h5": trained_weights})
    before = _tree(project)
    proc, done = _run(project, "--no-color")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert done.read_text() == "ran to the end"
    assert _tree(project) == before
    assert "train.py:10: model.fit(...): backup" in proc.stdout
    assert 'train.py:11: model.save_weights("w.weights.h5"): not written during the check' in proc.stdout


BUGGY = """\
import numpy as np
import tensorflow as tf
import keras

np.save("features.npy", np.zeros(3))
with open("metrics.json", "w") as fh:
    fh.write("{}")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    q = model(x)
    picked = tf.cast(tf.argmax(q, axis=1), tf.float32)
    loss = tf.reduce_mean(tf.square(1.0 - picked))
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_a_buggy_script_still_gets_its_findings(tmp_path):
    project = _project(tmp_path, BUGGY)
    before = _tree(project)
    proc, _done = _run(project, "--no-color", "--format", "concise")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "GC101" in proc.stdout
    assert 'train.py:5: np.save("features.npy", np.zeros(3)): not written during the check' in proc.stdout
    assert _tree(project) == before


REFUSED = """\
import _io
import numpy as np
import keras

x = np.random.rand(16, 4).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(x, x[:, :1], batch_size=4, epochs=2, verbose=0)  # cut short at its checked step
_io.FileIO("final.keras", "w")  # below the redirect: refused
model.fit(x, x[:, :1], epochs=1, verbose=0)  # a second training, which the refusal keeps the run from
"""


def test_a_refused_write_that_ends_the_script_says_the_check_ended_there(tmp_path):
    project = _project(tmp_path, REFUSED)
    before = _tree(project)
    proc, _done = _run(project, "--no-color")
    assert _tree(project) == before
    assert (
        'train.py:9: _io.FileIO("final.keras", "w"): refused (PermissionError); the script failed there, '
        "and the check ended there"
    ) in proc.stdout, proc.stdout + proc.stderr
    # the first training was checked; the refusal kept the run from the second (GC905)
    assert "GC905 checked 1 of 2 training entry points; not reached: train.py:10 (model.fit)" in proc.stdout
    assert "PermissionError" in proc.stdout
    assert proc.returncode == 2


KERAS2 = """\
import os
import numpy as np
import tensorflow as tf

keras = tf.keras
x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.save_weights("ckpts/tf_format")
model.load_weights("ckpts/tf_format")
callbacks = [
    keras.callbacks.CSVLogger("log.csv"),
    keras.callbacks.BackupAndRestore("backup"),
    keras.callbacks.ModelCheckpoint("ckpts/epoch{epoch}.h5"),
]
model.fit(x, y, epochs=2, verbose=0, callbacks=callbacks)
model.save("final.keras")
model.save("saved_model_dir")
with open(os.environ["SANDBOX_DONE"], "w") as fh:
    fh.write("ran to the end")
model.fit(x, y, epochs=1, verbose=0)  # a second training: the check runs on to it
"""


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_keras2_writers_are_redirected(tmp_path):
    project = _project(tmp_path, KERAS2)
    before = _tree(project)
    proc, done = _run(project, "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert done.read_text() == "ran to the end"
    assert _tree(project) == before
    targets = {(k["line"], k["target"]) for k in json.loads(proc.stdout)["files"][0]["kept_out"]}
    assert {(10, "ckpts/tf_format"), (17, "log.csv"), (17, "ckpts/epoch1.h5"), (18, "final.keras")} <= targets
    assert (19, "saved_model_dir") in targets


FIXABLE = """\
import numpy as np
import tensorflow as tf

from helper import make_model  # a sibling module: the verification imports it too

np.save("features.npy", np.zeros(3))
model = make_model()
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 3, size=16)
targets = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    q = model(states)
    q_action = tf.cast(tf.argmax(q, axis=1), tf.float32)
    loss = tf.reduce_mean(tf.square(targets - q_action))
grads = tape.gradient(loss, model.trainable_variables)
"""
HELPER = """\
import keras


def make_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
"""


def test_diff_verifies_the_patch_from_a_temporary_directory(tmp_path):
    project = _project(tmp_path, FIXABLE)
    (project / "helper.py").write_text(HELPER)
    before, folder_changed = _tree(project), project.stat().st_mtime_ns
    proc, _done = _run(project, "--no-color", "--diff")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "+    q_action = tf.cast(tf.gather(q, actions, batch_dims=1), tf.float32)" in proc.stdout
    assert _tree(project) == before  # nothing the patched run wrote
    assert project.stat().st_mtime_ns == folder_changed  # no copy made (and removed) beside train.py


def test_the_precommit_trace_hook_changes_no_file(tmp_path):
    from tests import test_precommit as pc

    if pc.PRE_COMMIT is None or shutil.which("git") is None:
        pytest.skip("needs pre-commit and git")
    hook_repo = pc.hook_repo.__wrapped__(tmp_path_factory=_Factory(tmp_path))
    script = KERAS_FIT.replace('os.environ["SANDBOX_DONE"]', '"/dev/null"')
    files = {"train.py": script, **{name: f"the user's {name}\n" for name in SEEDED}}
    project = pc._project(tmp_path / "project", hook_repo, files)
    before = {k: v for k, v in _tree(project).items() if not k.startswith(".git/") and k != ".git"}
    env = {"PRE_COMMIT_HOME": str(tmp_path / "home"), "PATH": f"{pc.BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [pc.PRE_COMMIT, "run", "gradcheck-trace", "--all-files", "--verbose", "--color", "never"]
    result = pc._run(command, project, env)  # --verbose: the output of a hook that passed
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'model.save("final.keras"): not written during the check' in result.stdout
    after = {k: v for k, v in _tree(project).items() if not k.startswith(".git/") and k != ".git"}
    assert after == before


class _Factory:
    """``tmp_path_factory.mktemp`` for calling a module fixture's function directly."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mktemp(self, name: str) -> Path:
        path = self.root / name
        path.mkdir()
        return path


def test_directory_walks_see_the_checks_view(box):
    Path("new.txt").write_text("made\n")
    os.remove("kept.txt")
    walked = {name for _root, _dirs, files in os.walk(".") for name in files}  # next() on os.scandir
    assert walked == {"new.txt", "inner.txt"}
    assert sorted(p.name for p in Path(".").glob("*.txt")) == ["new.txt"]


def test_library_caches_are_written_as_under_python(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("KERAS_HOME", str(project / "keras-home"))  # inside the protected project
    sandbox = Sandbox(protect=[str(project)])
    sandbox.install()
    try:
        os.makedirs(project / "keras-home" / "datasets")
        (project / "keras-home" / "datasets" / "mnist.npz").write_bytes(b"downloaded once")
        (project / "model.keras").write_bytes(b"kept out")
    finally:
        sandbox.remove()
    assert (project / "keras-home" / "datasets" / "mnist.npz").read_bytes() == b"downloaded once"
    assert not (project / "model.keras").exists()


def test_a_file_written_again_after_its_deletion_was_kept_out(box):
    os.remove("dir/inner.txt")  # `if exists: remove` then save: the usual overwrite
    Path("dir/inner.txt").write_text("new\n")
    assert Path("dir/inner.txt").read_text() == "new\n"
    shutil.rmtree("dir")
    os.makedirs("dir")
    Path("dir/again.txt").write_text("again\n")
    assert os.listdir("dir") == ["again.txt"]
    os.utime("kept.txt")  # a folder or file touched: its copy is
    assert Path("kept.txt").read_text() == "original\n"


# -- the report -------------------------------------------------------------------------------


def _kept_report():
    from gradcheck.findings import FileResult, KeptOut
    from gradcheck.report import Report

    kept = [KeptOut("train.py", 10 + i, f"np.save('f{i}.npy', x)", f"f{i}.npy", "written") for i in range(6)]
    kept.append(KeptOut("train.py", 30, '_io.FileIO("final.keras", "w")', "final.keras", "refused", True, True))
    return Report([FileResult("train.py", steps_checked=1, kept_out=kept, kept_out_more=4)])


def test_the_text_lists_a_few_calls_and_says_how_many_more():
    from gradcheck.output import render

    text = render(_kept_report(), "full")
    assert "train.py:10: np.save('f0.npy', x): not written during the check" in text
    assert "train.py:14:" not in text  # five shown, the refusal that ended the check among them
    assert (
        'train.py:30: _io.FileIO("final.keras", "w"): refused (PermissionError); the script failed there, '
        "and the check ended there"
    ) in text
    assert "... and 6 more kept off the disk (--format json lists them)" in text


def test_kept_out_is_additive_in_json_and_a_note_in_sarif():
    import jsonschema

    from gradcheck.findings import FileResult
    from gradcheck.output import render
    from tests.conftest import ROOT

    report = _kept_report()
    data = json.loads(render(report, "json"))
    schema = json.loads((ROOT / "gradcheck" / "schema" / "report-v1.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    (file,) = data["files"]
    assert len(file["kept_out"]) == 7 and file["kept_out_more"] == 4
    assert file["kept_out"][-1] == {
        "path": "train.py",
        "line": 30,
        "call": '_io.FileIO("final.keras", "w")',
        "target": "final.keras",
        "action": "refused",
        "ended": True,
    }
    assert FileResult.from_json(file).kept_out == report.files[0].kept_out  # the child's result, read back
    assert (
        "kept_out"
        not in json.loads(render(type(report)([FileResult("clean.py", steps_checked=1)]), "json"))["files"][0]
    )

    sarif = json.loads(render(report, "sarif"))
    (invocation,) = sarif["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    assert len(notes) == 7 and {n["level"] for n in notes} == {"note"}
    assert notes[0]["message"]["text"] == "np.save('f0.npy', x): f0.npy not written during the check"
    assert notes[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 10}
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
