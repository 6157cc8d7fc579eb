"""What must hold on every supported Python × TensorFlow × Keras (the smoke set of the
version matrix, ``noxfile.py``): ``--version`` names the Keras in use, eager findings
point at the right line on every Python (3.10 has no column table), and tf_keras is a
first-class target: ``dense/kernel`` names, ``fit``, ``tf.keras.backend`` ops, and a check
that does not train."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

from tests.conftest import ROOT, run_cli

HAS_TF_KERAS = importlib.util.find_spec("tf_keras") is not None
LEGACY = {"TF_USE_LEGACY_KERAS": "1"}
keras2 = [pytest.mark.keras2, pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")]


def _json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


# -- --version -------------------------------------------------------------------------


def test_version_names_keras_3_by_default():
    proc = run_cli("--version", env={"TF_USE_LEGACY_KERAS": "0"})
    assert proc.returncode == 0
    python = ".".join(map(str, sys.version_info[:3]))
    assert f"(Python {python}, TensorFlow " in proc.stdout
    assert proc.stdout.rstrip().endswith(f"Keras {metadata.version('keras')})")


@pytest.mark.parametrize("value", ["1", "true", "True"])
@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_version_names_tf_keras_when_legacy_keras_is_on(value):
    proc = run_cli("--version", env={"TF_USE_LEGACY_KERAS": value})
    assert f"Keras {metadata.version('tf_keras')} (tf_keras, as TF_USE_LEGACY_KERAS is set)" in proc.stdout


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_version_agrees_with_what_tf_keras_is():
    """What ``--version`` says (without importing TensorFlow) is what ``tf.keras`` turns out to be."""
    code = (
        "import sys, tensorflow as tf; package = tf.keras.layers.Dense.__module__.split('.')[0]; "
        "print(package, sys.modules[package].__version__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**_env(), **LEGACY}, capture_output=True, text=True, check=True
    )
    package, version = done.stdout.split()[-2:]
    assert package == "tf_keras"
    assert f"Keras {version} (tf_keras" in run_cli("--version", env=LEGACY).stdout


def _env() -> dict:
    import os

    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


# -- eager lines on every Python (3.10: no co_positions) -------------------------------

EAGER_MODULE = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(2)])
x = tf.random.normal((8, 4))
with tf.GradientTape() as tape:
    q = model(x)
    a = tf.argmax(q, axis=1)
    loss = tf.reduce_mean(tf.cast(a, tf.float32))
grads = tape.gradient(loss, model.trainable_variables)
"""

EAGER_FUNCTION = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(2)])


def helper(q):
    scaled = q * 2.0
    return tf.round(scaled)


def step(x):
    with tf.GradientTape() as tape:
        q = model(x)
        r = helper(q)
        loss = tf.reduce_mean(
            r
        )
    return tape.gradient(loss, model.trainable_variables)


for _ in range(3):
    step(tf.random.normal((8, 4)))
"""

EAGER_MULTILINE = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = tf.random.normal((8, 4))
with tf.GradientTape() as tape:
    q = model(x)
    loss = tf.reduce_mean(
        tf.square(
            tf.floor(q)
        )
    )
grads = tape.gradient(loss, model.trainable_variables)
"""


@pytest.mark.parametrize(
    ("source", "code", "where"),
    [
        (EAGER_MODULE, "GC101", (8, 9, 8, 29)),  # module level: was line 1 on Python 3.10
        (EAGER_FUNCTION, "GC102", (9, 12, 9, 28)),  # in a helper: was an earlier line on 3.10
        (EAGER_MULTILINE, "GC102", (10, 13, 10, 24)),  # the inner line of a call spread over lines
    ],
    ids=["module", "function", "multiline"],
)
def test_eager_finding_points_at_the_exact_span(run_script, source, code, where):
    result = run_script(source)
    assert result.error is None, result.error
    (finding,) = result.findings
    assert finding.code == code
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == where


# -- tf_keras (Keras 2) ----------------------------------------------------------------

SAVE_WEIGHTS = """\
def save(name):
    np.save(f"{out}/{name}.npy", np.concatenate([w.ravel() for w in model.get_weights()]))
"""

FIT_CLEAN = f"""\
import sys

import numpy as np
import tensorflow as tf

out = sys.argv[1]
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)])
model.compile(optimizer="adam", loss="mse")
{SAVE_WEIGHTS}
save("before")


class Save(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        save("after")


x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 2).astype("float32")
model.fit(x, y, epochs=2, batch_size=8, callbacks=[Save()], verbose=0)
"""

LEGACY_OPTIMIZER_LOOP = f"""\
import sys

import numpy as np
import tensorflow as tf

out = sys.argv[1]
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.legacy.SGD(0.1)
x = tf.random.normal((8, 4))
y = tf.random.normal((8, 2))
{SAVE_WEIGHTS}
save("before")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    save("after")
"""

# No TF_USE_LEGACY_KERAS: the script imports tf_keras itself.
DIRECT_TF_KERAS = f"""\
import sys

import numpy as np
import tensorflow as tf
import tf_keras as keras

out = sys.argv[1]
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(2)])
optimizer = keras.optimizers.SGD(0.1)
x = tf.random.normal((8, 4))
y = tf.random.normal((8, 2))
{SAVE_WEIGHTS}
save("before")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    save("after")
"""


@pytest.mark.parametrize(
    ("source", "env"),
    [(FIT_CLEAN, LEGACY), (LEGACY_OPTIMIZER_LOOP, LEGACY), (DIRECT_TF_KERAS, {"TF_USE_LEGACY_KERAS": "0"})],
    ids=["fit", "legacy-optimizer-v2", "import-tf_keras"],
)
@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_a_check_of_a_tf_keras_script_does_not_train(tmp_path, source, env):
    script = tmp_path / "project" / "train.py"
    script.parent.mkdir()
    script.write_text(source, encoding="utf-8")
    out = tmp_path / "out"  # in the temp directory, outside the project: written for real during a check
    out.mkdir()
    proc = run_cli("--format", "json", str(script), "--", str(out), env=env)
    (record,) = _json(proc)["files"]
    assert record["error"] is None and record["findings"] == [] and record["steps_checked"] == 1, proc.stdout
    before, after = np.load(out / "before.npy"), np.load(out / "after.npy")
    np.testing.assert_array_equal(before, after)


BACKEND_ROUND = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K


def rounded_mse(y_true, y_pred):
    return K.mean(K.square(y_true - K.round(y_pred)))


model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)])
model.compile(optimizer="adam", loss=rounded_mse)
x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 2).astype("float32")
model.fit(x, y, epochs=1, batch_size=8, verbose=0)
"""


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_tf_keras_backend_op_in_a_fit_loss(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(BACKEND_ROUND, encoding="utf-8")
    (record,) = _json(run_cli("--format", "json", str(script), env=LEGACY))["files"]
    (finding,) = record["findings"]
    assert (finding["code"], finding["line"], finding["column"], finding["call"]) == ("GC102", 7, 37, "K.round")
    assert finding["variables"] == ["dense/bias", "dense/kernel", "dense_1/bias", "dense_1/kernel"]


CHECK_MODEL = """\
import numpy as np
import tensorflow as tf

import gradcheck

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)])
model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse")
before = [w.copy() for w in model.get_weights()]
batch = (np.random.rand(8, 4).astype("float32"), np.random.rand(8, 2).astype("float32"))
report = gradcheck.check_model(model, batch)
assert report.ok, report.to_text()
assert all((a == b).all() for a, b in zip(before, model.get_weights())), "check_model trained the model"
model.fit(*batch, epochs=1, verbose=0)  # and after the check, training trains again
assert any((a != b).any() for a, b in zip(before, model.get_weights())), "the optimizer stayed patched"
print("ok")
"""


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_check_model_on_a_tf_keras_model_leaves_the_weights():
    done = subprocess.run(
        [sys.executable, "-c", CHECK_MODEL],
        env={**_env(), **LEGACY},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout.strip().endswith("ok"), done.stderr[-3000:]
