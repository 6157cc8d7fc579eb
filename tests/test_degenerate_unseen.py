"""Degenerate gradients (GC2xx) on code nobody here has seen (issue 36 §3): each mechanism
with the shape that was silent or misplaced, and a correct look-alike that stays silent, in
eager and in ``tf.function`` (and under ``fit`` / tf_keras where the shape exists there)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import run_cli

needs_tf_keras = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")


def _codes_lines(result) -> list[tuple[str, int]]:
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def _cli_findings(script, *env_pairs) -> list[tuple[str, int]]:
    proc = run_cli(str(script), "--format", "json", env=dict(env_pairs))
    report = json.loads(proc.stdout)
    assert all(f["status"] == "checked" for f in report["files"]), proc.stdout + proc.stderr
    return sorted((f["code"], f["line"]) for file in report["files"] for f in file["findings"])


# -- 1. a ReLU dead on the batch whose inputs are partly exactly 0 ------------------------
# Rows of zeros reach the output ReLU as exact zeros (0 * w + a zero bias): "the largest input
# is 0" is not a ReLU at the edge, it is held at 0 by zeros, and the other rows are off by a
# margin. (569: the layer before is dead on one sample, so its pre-activation there is 0.)
RELU_HELD_AT_ZERO = """\
import keras
import numpy as np
import tensorflow as tf

x = np.concatenate([np.zeros((2, 3)), np.random.default_rng(0).uniform(1, 2, (6, 3))]).astype("float32")
y = np.linspace(-3, 3, 8).reshape(8, 1).astype("float32")
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="{activation}", kernel_initializer=keras.initializers.Constant(-0.5))])


{decorator}
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
    return tape.gradient(loss, net.trainable_variables)


step(x, y)
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_relu_held_at_zero_on_some_samples_and_off_on_the_rest_is_dead(run_script, decorator):
    source = RELU_HELD_AT_ZERO.format(activation="relu", decorator=decorator)
    result = run_script(source)
    assert _codes_lines(result) == [("GC201", 7)]
    assert "exactly 0" in result.findings[0].message


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_the_same_layer_linear_is_silent(run_script, decorator):
    assert _codes_lines(run_script(RELU_HELD_AT_ZERO.format(activation="linear", decorator=decorator))) == []


RELU_ZERO_MOSTLY = """\
import keras
import numpy as np
import tensorflow as tf

# six padding rows and two rows off: too few samples off to call the unit dead (chance)
x = np.concatenate([np.zeros((6, 3)), np.random.default_rng(0).uniform(1, 2, (2, 3))]).astype("float32")
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="relu", kernel_initializer=keras.initializers.Constant(-0.5))])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(net(x) - 1.0))
grads = tape.gradient(loss, net.trainable_variables)
"""


def test_a_relu_off_on_too_few_samples_beside_exact_zeros_is_chance(run_script):
    assert _codes_lines(run_script(RELU_ZERO_MOSTLY)) == []


RELU_FIT_KERAS2 = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

x = np.concatenate([np.zeros((2, 3)), np.random.default_rng(0).uniform(1, 2, (6, 3))]).astype("float32")
y = np.linspace(-3, 3, 8).reshape(8, 1).astype("float32")
model = keras.Sequential([keras.layers.Dense(1, activation="{activation}", kernel_initializer=keras.initializers.Constant(-0.5), input_shape=(3,))])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=8, epochs=1, verbose=0)
"""


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize(("activation", "expected"), [("relu", [("GC201", 7)]), ("linear", [])])
def test_tf_keras_fit_relu_held_at_zero(tmp_path, activation, expected):
    script = tmp_path / "train.py"
    script.write_text(RELU_FIT_KERAS2.format(activation=activation), encoding="utf-8")
    assert _cli_findings(script, ("TF_USE_LEGACY_KERAS", "1")) == expected
