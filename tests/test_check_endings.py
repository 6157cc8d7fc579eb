"""Every way a check ends, on correct programs: each must come out checked and silent (exit
0, "No findings", ``steps_checked >= 1``), as it trains under ``python``. The check ends a
program with its stop (``StopCheck``) only at a host point, never inside TensorFlow's
runtime (a ``py_function`` body, a host callback of the value checks, a ``tf.data``
function), where TensorFlow turns it into the program's own crash (``record.hostpoint``).
The replica contexts of ``tf.distribute`` are in ``tests/test_distribute.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

HEAD = """\
import numpy as np
import tensorflow as tf
import keras

x, y = np.random.rand(64, 4).astype("float32"), np.random.rand(64, 1).astype("float32")


def make_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])


"""

EAGER_LOOP = (
    HEAD
    + """\
model, optimizer = make_model(), keras.optimizers.SGD(0.01)
for epoch in range(3):
    for i in range(0, 64, 16):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x[i : i + 16]) - y[i : i + 16]))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
)

FIT = (
    HEAD
    + """\
model = make_model()
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16, epochs=3, verbose=0)
"""
)

# After its checked fit the program goes on (as after an EarlyStopping) into a phase that
# outlasts --timeout: what was checked stands.
LATER_PHASE = (
    FIT
    + """\
import time

while True:  # serving, evaluation...
    time.sleep(0.2)
"""
)

# The whole training step runs eagerly inside a tf.py_function of a traced function: the
# budget calls for the stop while TensorFlow's runtime runs the Python body.
PY_FUNCTION_STEP = (
    HEAD
    + """\
import os

model, optimizer = make_model(), keras.optimizers.SGD(0.01)


def eager_step(xb, yb):
    with open(os.environ["STEPS_LOG"], "a") as log:  # how many steps ran
        log.write("step\\n")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def train_step(xb, yb):
    return tf.py_function(eager_step, [xb, yb], tf.float32)


for epoch in range(3):
    for i in range(0, 64, 16):
        train_step(x[i : i + 16], y[i : i + 16])
"""
)

# A tf.data map whose Python body (tf.py_function, run by tf.data's own threads while the
# step trains) jitters with NumPy and asks a teacher model for a soft target.
DATA_MAP = (
    HEAD
    + """\
teacher = make_model()


def augment(xb, yb):
    noisy = xb.numpy() + np.random.normal(0, 0.01, xb.shape).astype("float32")
    soft = 0.9 * yb + 0.1 * teacher(noisy[None])[0]
    return tf.constant(noisy), soft


def mapped(xb, yb):
    xa, ya = tf.py_function(augment, [xb, yb], [tf.float32, tf.float32])
    xa.set_shape([4])
    ya.set_shape([1])
    return xa, ya


dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(mapped, num_parallel_calls=2).batch(16).repeat()
model = make_model()
model.compile(optimizer="sgd", loss="mse")
model.fit(dataset, steps_per_epoch=4, epochs=3, verbose=0)
optimizer = keras.optimizers.SGD(0.01)
for xb, yb in dataset.take(8):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
)

# A callback that calls the model at every batch end (a monitor on a probe batch) and takes
# a gradient of its own (its norm, logged).
CALLBACK = (
    HEAD
    + """\
probe = x[:8]


class Monitor(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.mean = float(tf.reduce_mean(self.model(probe, training=False)))
        with tf.GradientTape() as tape:
            out = tf.reduce_mean(self.model(probe, training=False))
        self.norm = float(tf.linalg.global_norm(tape.gradient(out, self.model.trainable_variables)))


model = make_model()
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16, epochs=3, verbose=0, callbacks=[Monitor()])
"""
)

# The same callback declared async-safe: Keras 3 runs its batch-end hooks in a thread pool of
# its own, beside the training loop.
ASYNC_CALLBACK = CALLBACK.replace(
    "class Monitor(keras.callbacks.Callback):\n",
    "class Monitor(keras.callbacks.Callback):\n    async_safe = True\n\n",
)

# Issue 35: a Keras 3 custom layer whose tf.custom_gradient chains the upstream gradient
# through a tape of its own. The value check calls that gradient function again inside a
# host callback (a py_function of fit's graph); its tape.gradient was counted as a step of
# the user's and the budget's stop crashed fit with "UnknownError ... EagerPyFunc".
CUSTOM_GRADIENT_FIT = (
    HEAD
    + """\
@tf.custom_gradient
def smooth(v):
    out = tf.tanh(v)

    def grad(dy):
        with tf.GradientTape() as inner:
            inner.watch(v)
            again = tf.tanh(v)
        return inner.gradient(again, v, output_gradients=dy)

    return out, grad


class Smooth(keras.layers.Layer):
    def call(self, v):
        return smooth(v)


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), Smooth(), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16, epochs=3, verbose=0)
"""
)

SCRIPTS = {
    "eager_loop.py": EAGER_LOOP,
    "fit.py": FIT,
    "py_function_step.py": PY_FUNCTION_STEP,
    "data_map.py": DATA_MAP,
    "callback.py": CALLBACK,
    "async_callback.py": ASYNC_CALLBACK,
    "custom_gradient_fit.py": CUSTOM_GRADIENT_FIT,
}


def _write(folder: Path, scripts: dict) -> None:
    for name, source in scripts.items():
        (folder / name).write_text(source + 'print("trained")\n')


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("endings")
    _write(folder, SCRIPTS)
    # beside the project, not in it: a check keeps the project's folder unchanged
    steps_log = tmp_path_factory.mktemp("endings-log") / "steps.log"
    proc = run_cli("--format", "json", "-j", "2", *SCRIPTS, cwd=folder, env={"STEPS_LOG": str(steps_log)})
    records = {record["path"]: record for record in json.loads(proc.stdout)["files"]}
    return {"proc": proc, "records": records, "py_function_steps": len(steps_log.read_text().split())}


def _assert_checked_and_silent(record: dict) -> None:
    assert record["error"] is None, record["error"]
    assert record["status"] == "checked"
    assert record["findings"] == []
    assert record["steps_checked"] >= 1


def test_eager_loop_ends_at_its_step_budget(checked):
    """Guards the step-budget stop of an eager custom loop (raised at the user's next
    ``tape.gradient``)."""
    _assert_checked_and_silent(checked["records"]["eager_loop.py"])


def test_fit_ends_at_its_step_budget(checked):
    """Guards the step-budget stop of ``fit`` (raised before its traced step runs again)."""
    _assert_checked_and_silent(checked["records"]["fit.py"])


def test_stop_called_for_inside_a_py_function_waits_for_the_host(checked):
    """Guards a stop the budget calls for while a ``tf.py_function`` body runs (the whole
    step inside it): raised at the next call of the traced function that ran it, not inside
    TensorFlow's runtime (was GC901 "UnknownError ... EagerPyFunc")."""
    _assert_checked_and_silent(checked["records"]["py_function_step.py"])
    # the checked step, the one during which the stop was called for, and no more of 12
    assert checked["py_function_steps"] == 2


def test_tf_data_map_with_a_python_body(checked):
    """Guards the stop while ``tf.data`` threads run a ``dataset.map`` ``py_function`` that
    calls NumPy and a model: their tapes and escapes are not the training step's."""
    _assert_checked_and_silent(checked["records"]["data_map.py"])


def test_keras_callback_that_calls_the_model(checked):
    """Guards the stop from inside a Keras callback (``on_train_batch_end`` calling the model
    and taking a gradient of its own)."""
    _assert_checked_and_silent(checked["records"]["callback.py"])


def test_async_keras_callback_that_calls_the_model(checked):
    """Guards the stop when the callback runs in Keras 3's own thread pool (``async_safe``):
    its gradient's stop reaches ``fit`` through the pool's future, as under python its errors do."""
    _assert_checked_and_silent(checked["records"]["async_callback.py"])


def test_custom_gradient_layer_in_fit(checked):
    """Guards issue 35's regression: the value check's host callback calls a custom
    gradient again, whose own ``tape.gradient`` is gradcheck's work, never a step of the
    user's, and never a stop inside the callback."""
    _assert_checked_and_silent(checked["records"]["custom_gradient_fit.py"])


def test_all_endings_exit_zero_with_no_findings(checked):
    """Guards the verdict of the whole run: exit 0 and "No findings"."""
    proc = checked["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == f"No findings in {len(SCRIPTS)} checked files"


def test_timeout_in_a_later_phase_keeps_the_checked_step(tmp_path):
    """Guards ``--timeout`` reached in a phase after the checked ``fit``: the file is
    checked and silent, not GC903."""
    _write(tmp_path, {"later.py": LATER_PHASE})
    proc = run_cli("--format", "json", "--timeout", "60", "later.py", cwd=tmp_path)
    (record,) = json.loads(proc.stdout)["files"]
    _assert_checked_and_silent(record)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == "No findings in 1 checked file"


def test_a_py_function_body_is_no_host_point():
    """Guards the test ``record.hostpoint`` makes before raising a stop: a ``py_function``
    body (traced or eager) is TensorFlow's runtime, gradcheck's own work is not the user's,
    the user's code outside both is a host point."""
    import tensorflow as tf

    from gradcheck.trace.record import hostpoint

    seen = []

    def body(v):
        seen.append((hostpoint.in_runtime_callback(), hostpoint.at_host_point()))
        return v

    tf.function(lambda v: tf.py_function(body, [v], tf.float32))(tf.constant(1.0))
    tf.py_function(body, [tf.constant(1.0)], tf.float32)
    assert seen == [(True, False), (True, False)]
    assert hostpoint.at_host_point()
    with hostpoint.own_work():
        assert not hostpoint.at_host_point()
    assert hostpoint.at_host_point()
