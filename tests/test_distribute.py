"""tf.distribute: every replica runs the step and takes its own ``tape.gradient``, and a
replica's variables are components of a distributed variable. A cut must be reported once,
naming each variable as the user knows it (``dense/kernel``, never ``.../replica_1``):
``MirroredStrategy`` over two logical CPUs (graph, eager, ``fit``; Keras 3 and tf_keras)
and ``MultiWorkerMirroredStrategy`` with two workers on localhost (``TF_CONFIG``)."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

TWO_CPUS = """\
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
"""

# line 13: the cut, in every custom-loop script below
CUSTOM_LOOP = (
    TWO_CPUS
    + """\
import {keras} as keras
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="hidden"), keras.layers.Dense(2, name="out")])
    optimizer = keras.optimizers.SGD(0.1)


def step_fn(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


{decorator}
def train_step(x):
    return strategy.reduce("SUM", strategy.run(step_fn, args=(x,)), axis=None)


dataset = tf.data.Dataset.from_tensor_slices(np.random.rand(64, 4).astype("float32")).batch(16)
for x in strategy.experimental_distribute_dataset(dataset):
    train_step(x)
"""
)

PLAIN_VARIABLES = (
    TWO_CPUS
    + """\
with strategy.scope():
    w = tf.Variable(tf.ones((4, 2)), name="w")
    b = tf.Variable(tf.zeros((2,)), name="b")


def step_fn(x):
    with tf.GradientTape() as tape:
        y = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.cast(tf.argmax(y, axis=1), tf.float32))
    return tape.gradient(loss, [w, b])


for x in strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(tf.ones((64, 4))).batch(16)):
    strategy.run(tf.function(step_fn), args=(x,))
"""
)

FIT = (
    TWO_CPUS
    + """\
import {keras} as keras


def rounded_mse(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - tf.round(y_pred)))


with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="hidden"), keras.layers.Dense(2, name="out")])
    model.compile(optimizer="sgd", loss=rounded_mse)
model.fit(np.random.rand(64, 4).astype("float32"), np.random.rand(64, 2).astype("float32"), batch_size=16, verbose=0)
"""
)

# The step function defined inside the tf.function: autograph converts it with the outer
# function, and strategy.run calls it in a replica thread.
NESTED = (
    TWO_CPUS
    + """\
import keras
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="out")])


@tf.function
def train_step(x):
    def step_fn(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.round(model(x)))
        return tape.gradient(loss, model.trainable_variables)

    return strategy.run(step_fn, args=(x,))


for _ in range(2):
    train_step(tf.ones((16, 4)))
"""
)

KERAS3 = ["sequential/hidden/bias", "sequential/hidden/kernel", "sequential/out/bias", "sequential/out/kernel"]
KERAS2 = ["hidden/bias", "hidden/kernel", "out/bias", "out/kernel"]

SCRIPTS = {
    "graph.py": (CUSTOM_LOOP.format(keras="keras", decorator="@tf.function"), ("GC102", 15, KERAS3)),
    "eager.py": (CUSTOM_LOOP.format(keras="keras", decorator=""), ("GC102", 15, KERAS3)),
    "variables.py": (PLAIN_VARIABLES, ("GC101", 15, ["b", "w"])),
    "fit.py": (FIT.format(keras="keras"), ("GC102", 11, KERAS3)),
    "nested.py": (NESTED, ("GC102", 16, ["sequential/out/bias", "sequential/out/kernel"])),
}
KNOWN_WRONG: dict[str, str] = {}  # name -> why, for a known engine limitation (none now)
SCRIPTS_KERAS2 = {
    "graph_k2.py": (CUSTOM_LOOP.format(keras="tf_keras", decorator="@tf.function"), ("GC102", 15, KERAS2)),
    "fit_k2.py": (FIT.format(keras="tf_keras"), ("GC102", 11, KERAS2)),
}


def _check(tmp_path: Path, scripts: dict, env: dict | None = None) -> dict:
    for name, (source, _) in scripts.items():
        (tmp_path / name).write_text(source)
    proc = run_cli("--format", "json", "-j", "2", *scripts, cwd=tmp_path, env=env)
    return {record["path"]: record for record in json.loads(proc.stdout)["files"]}


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory) -> dict:
    return _check(tmp_path_factory.mktemp("mirrored"), SCRIPTS)


def _assert_once(record: dict, expected: tuple) -> None:
    assert record["error"] is None, record["error"]
    (finding,) = record["findings"]  # once, not once per replica
    assert (finding["code"], finding["line"], finding["variables"]) == expected
    assert not any("replica" in name for name in finding["variables"])


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[name])] if name in KNOWN_WRONG else []
        )
        for name in SCRIPTS
    ],
)
def test_mirrored_strategy_reports_each_cut_once(mirrored, name):
    _assert_once(mirrored[name], SCRIPTS[name][1])


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
def test_mirrored_strategy_with_tf_keras(tmp_path):
    records = _check(tmp_path, SCRIPTS_KERAS2, env={"TF_USE_LEGACY_KERAS": "1"})
    for name, (_, expected) in SCRIPTS_KERAS2.items():
        _assert_once(records[name], expected)


# Correct programs, each as it trains under python: the check must end them checked and
# silent, its stop raised in a replica thread (the custom loops) or before fit's next step.
CLEAN_LOOP = (
    TWO_CPUS
    + """\
import keras
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(2)])
    optimizer = keras.optimizers.SGD(0.01)


def step_fn(x, y):
    with tf.GradientTape() as tape:
        per_example = tf.reduce_mean(tf.square(model(x) - y), axis=1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=16)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


{decorator}
def train_step(x, y):
    return strategy.reduce("SUM", strategy.run(step_fn, args=(x, y)), axis=None)


data = (np.random.rand(64, 4).astype("float32"), np.random.rand(64, 2).astype("float32"))
for epoch in range(3):
    for x, y in strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(data).batch(16)):
        train_step(x, y)
"""
)

CLEAN_FIT = (
    TWO_CPUS
    + """\
import keras
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(64, 4).astype("float32"), np.random.rand(64, 2).astype("float32"), batch_size=16, epochs=3, verbose=0)
"""
)

# Issue 35: a multi-output model, every head with a loss, whose trunk reduces across the
# replicas (a synchronized BatchNormalization: a merge_call inside the tape). One replica's
# open tape was taken for the other's, so one replica applied the update the other skipped;
# and the checks' own differentiation met merge_calls in the first replica only. Both
# failed fit with "Some replicas made a different number of replica_context().merge_call()
# calls".
MULTI_OUTPUT = (
    TWO_CPUS
    + """\
import keras


def {loss_b}(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - {head_b}))


with strategy.scope():
    inputs = keras.Input((4,))
    h = keras.layers.Dense(8, activation="relu")(inputs)
    h = keras.layers.BatchNormalization(synchronized=True)(h)
    a = keras.layers.Dense(2, name="a")(h)
    b = keras.layers.Dense(1, name="b")(h)
    model = keras.Model(inputs, {{"a": a, "b": b}})
    model.compile(optimizer="adam", loss={{"a": "mse", "b": {loss_b}}}, loss_weights={{"a": 1.0, "b": 0.5}})
x = np.random.rand(64, 4).astype("float32")
model.fit(x, {{"a": np.random.rand(64, 2).astype("float32"), "b": np.random.rand(64, 1).astype("float32")}}, batch_size=16, epochs=3, verbose=0)
"""
)

MULTI_OUTPUT_TRAIN_STEP = (
    TWO_CPUS
    + """\
import keras


class TwoHeads(keras.Model):
    def train_step(self, data):
        x, (ya, yb) = data
        with tf.GradientTape() as tape:
            pa, pb = self(x, training=True)
            loss = tf.reduce_mean(tf.square(pa - ya)) + 0.5 * tf.reduce_mean(tf.square(pb - yb))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


with strategy.scope():
    inputs = keras.Input((4,))
    h = keras.layers.Dense(8, activation="relu")(inputs)
    h = keras.layers.BatchNormalization(synchronized=True)(h)
    model = TwoHeads(inputs, [keras.layers.Dense(2)(h), keras.layers.Dense(1)(h)])
    model.compile(optimizer="adam")
x = np.random.rand(64, 4).astype("float32")
model.fit(x, (np.random.rand(64, 2).astype("float32"), np.random.rand(64, 1).astype("float32")), batch_size=16, epochs=3, verbose=0)
"""
)

CLEAN = {
    "loop_eager.py": CLEAN_LOOP.format(decorator=""),
    "loop_graph.py": CLEAN_LOOP.format(decorator="@tf.function"),
    "fit_clean.py": CLEAN_FIT,
    "multi_output.py": MULTI_OUTPUT.format(loss_b="squared", head_b="y_pred"),
    "multi_output_train_step.py": MULTI_OUTPUT_TRAIN_STEP,
}
CLEAN_DOCS = {
    "loop_eager.py": "the step-budget stop raised in a replica thread of an eager custom loop + strategy.run",
    "loop_graph.py": "the step-budget stop of a traced custom loop + strategy.run",
    "fit_clean.py": "the step-budget stop of fit under MirroredStrategy",
    "multi_output.py": "issue 35: a multi-output model with a cross-replica reduction in its trunk, in fit",
    "multi_output_train_step.py": "issue 35: the same model in a custom train_step",
}


@pytest.fixture(scope="module")
def mirrored_clean(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("mirrored_clean")
    for name, source in CLEAN.items():
        (folder / name).write_text(source)
    proc = run_cli("--format", "json", "-j", "2", *CLEAN, cwd=folder)
    return proc, {record["path"]: record for record in json.loads(proc.stdout)["files"]}


@pytest.mark.parametrize("name", list(CLEAN))
def test_mirrored_strategy_correct_program_is_checked_and_silent(mirrored_clean, name):
    """Guards, for each program, what ``CLEAN_DOCS`` names: checked and silent, not a crash of
    the user's step (the replicas make the same merge_calls under the check as under python)."""
    record = mirrored_clean[1][name]
    assert record["error"] is None, record["error"]
    assert (record["status"], record["findings"]) == ("checked", [])
    assert record["steps_checked"] >= 1


def test_mirrored_strategy_correct_programs_exit_zero(mirrored_clean):
    """Guards the verdict of the run over the correct programs: exit 0, "No findings"."""
    proc, records = mirrored_clean
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == f"No findings in {len(records)} checked files"


def test_cut_in_a_head_behind_a_cross_replica_reduction(tmp_path):
    """Guards the diagnosis where the checks' own questions meet a cross-replica reduction
    (the all-reduce stands for the replica's own value): the rounded head is found once."""
    (tmp_path / "multi_cut.py").write_text(MULTI_OUTPUT.format(loss_b="rounded", head_b="tf.round(y_pred)"))
    proc = run_cli("--format", "json", "multi_cut.py", cwd=tmp_path)
    (record,) = json.loads(proc.stdout)["files"]
    _assert_once(record, ("GC102", 11, ["b/bias", "b/kernel"]))


MULTI_WORKER = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="out")])
        optimizer = keras.optimizers.SGD(0.1)


    def step_fn(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.round(model(x)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss


    @tf.function
    def train_step(x):
        return strategy.reduce("SUM", strategy.run(step_fn, args=(x,)), axis=None)


    dataset = tf.data.Dataset.from_tensor_slices(np.random.rand(64, 4).astype("float32")).batch(16)
    for x in strategy.experimental_distribute_dataset(dataset):
        train_step(x)
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_multi_worker_mirrored_strategy_on_localhost(tmp_path):
    """Each worker runs ``gradcheck train.py`` with its own ``TF_CONFIG``, as it would run
    ``python train.py``; each reports the cut once."""
    script = tmp_path / "train.py"
    script.write_text(MULTI_WORKER)
    workers = [f"localhost:{_free_port()}", f"localhost:{_free_port()}"]
    procs = []
    for index in range(2):
        config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = dict(os.environ, TF_CONFIG=json.dumps(config), TF_CPP_MIN_LOG_LEVEL="2")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "gradcheck", "--format", "json", "--timeout", "240", str(script)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for proc in procs:
        out, err = proc.communicate(timeout=400)
        assert out, err[-3000:]
        (record,) = json.loads(out)["files"]
        _assert_once(record, ("GC102", 13, ["sequential/out/bias", "sequential/out/kernel"]))
