"""Degenerate gradients on code nobody here has seen, round 4 (issue 36 §3): each mechanism
with the shape that went wrong, and a correct look-alike that stays silent, in eager code
and in a ``tf.function`` (and under tf_keras where the shape exists there)."""

from __future__ import annotations

import importlib.util

import pytest


def _codes_lines(result) -> list[tuple[str, int]]:
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


needs_tf_keras = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
DECORATORS = pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])

# -- 1. an integer cast on one of two views zeroes every gradient (progE item 1) ----------
# The encoder's ReLU features lie in [0, 1): cast to int they are 0, so view 1's projection
# is the zero-initialised bias (0), its l2-normalised version is 0, and every similarity,
# hence every gradient into view 2's branch, is multiplied by it. TensorFlow gives zeros,
# not None (view 2's path is structurally alive): the cast is the cause (GC103, its line).
# The twin casts to float64 and back (a gradient passes): silent.
TWO_VIEWS = """\
import numpy as np
import tensorflow as tf
import keras
from keras import layers

enc = keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="relu")])
head = keras.Sequential([keras.Input((8,)), layers.Dense(8, activation="relu"), layers.Dense(8)])
opt = keras.optimizers.Adam()
rng = np.random.default_rng(0)
x1 = rng.uniform(0, 0.1, (8, 6)).astype("float32")
x2 = rng.uniform(0, 0.1, (8, 6)).astype("float32")


{decorator}
def step(a, b):
    with tf.GradientTape() as tape:
        f1 = enc(a)
        {cut}
        f2 = enc(b)
        z1 = tf.math.l2_normalize(head(f1), axis=1)
        z2 = tf.math.l2_normalize(head(f2), axis=1)
        logits = tf.matmul(z1, z2, transpose_b=True) / 0.1
        t = tf.range(tf.shape(logits)[0])
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(t, logits, from_logits=True))
    variables = enc.trainable_variables + head.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


for _ in range(2):
    step(x1, x2)
"""


INT_CAST = "f1 = tf.cast(tf.cast(f1, tf.int32), f1.dtype)"
FLOAT_CAST = "f1 = tf.cast(tf.cast(f1, tf.float64), f1.dtype)"


@DECORATORS
def test_int_cast_of_one_view_zeroes_the_other_gc103(run_script, decorator):
    result = run_script(TWO_VIEWS.format(decorator=decorator, cut=INT_CAST))
    assert _codes_lines(result) == [("GC103", 18)]
    (finding,) = result.findings
    assert "zeros, not None" in " ".join(finding.notes)
    # the encoder and the head's kernels; the head's last bias is the one that trains
    assert "sequential/dense/kernel" in finding.variables and len(finding.variables) == 5, finding.variables


@DECORATORS
def test_float_cast_of_one_view_silent(run_script, decorator):
    assert _codes_lines(run_script(TWO_VIEWS.format(decorator=decorator, cut=FLOAT_CAST))) == []


# -- 2. a mask closed on one view, behind a zero-initialised bias (smoke_ssl_finetune) -----
# ``h1 * tf.cast(h1 > 1e9, h1.dtype)``: view 1's projection is the projector's bias, zero on
# the first step, so the similarities zero view 2's gradients too. That bias trains (the
# first update moves it), but a sum is zero for the structural reason of its other part:
# the mask, GC201 at its line. The finding was dropped whole because the bias's zero is a
# one-step one. The twin's mask is open (``> -1e9``): silent.
CLOSED_MASK = "f1 = f1 * tf.cast(f1 > 1e9, f1.dtype)"
OPEN_MASK = "f1 = f1 * tf.cast(f1 > -1e9, f1.dtype)"


@DECORATORS
@pytest.mark.parametrize(("cut", "expected"), [(CLOSED_MASK, [("GC201", 18)]), (OPEN_MASK, [])], ids=["closed", "open"])
def test_mask_on_one_view_behind_zero_bias(run_script, decorator, cut, expected):
    assert _codes_lines(run_script(TWO_VIEWS.format(decorator=decorator, cut=cut))) == expected


# The program's own shape: ``fit`` over a custom ``train_step`` of a tf_keras model.
TWO_VIEWS_FIT = """\
import numpy as np
import tensorflow as tf
import {keras} as keras
from {keras} import layers


class Contrastive(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([layers.Input((6,)), layers.Dense(8, activation="relu")])
        self.head = keras.Sequential([layers.Input((8,)), layers.Dense(8, activation="relu"), layers.Dense(8)])

    def train_step(self, data):
        a, b = data
        with tf.GradientTape() as tape:
            f1 = self.encoder(a)
            {cut}
            f2 = self.encoder(b)
            z1 = tf.math.l2_normalize(self.head(f1), axis=1)
            z2 = tf.math.l2_normalize(self.head(f2), axis=1)
            logits = tf.matmul(z1, z2, transpose_b=True) / 0.1
            t = tf.range(tf.shape(logits)[0])
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(t, logits, from_logits=True))
        variables = self.encoder.trainable_weights + self.head.trainable_weights
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return {{"loss": loss}}


rng = np.random.default_rng(0)
views = rng.uniform(0, 0.1, (2, 16, 6)).astype("float32")
model = Contrastive()
model.compile(optimizer=keras.optimizers.Adam())
model.fit(tf.data.Dataset.from_tensor_slices((views[0], views[1])).batch(8), epochs=1, verbose=0)
"""


FIT_CASES = pytest.mark.parametrize(
    ("cut", "expected"),
    [(INT_CAST, [("GC103", 17)]), (FLOAT_CAST, []), (CLOSED_MASK, [("GC201", 17)]), (OPEN_MASK, [])],
    ids=["int_cast", "float_cast", "closed_mask", "open_mask"],
)


@FIT_CASES
def test_fit_one_view_zeroes_the_other(run_script, cut, expected):
    assert _codes_lines(run_script(TWO_VIEWS_FIT.format(keras="keras", cut=cut))) == expected


@pytest.mark.keras2
@needs_tf_keras
@FIT_CASES
def test_tf_keras_fit_one_view_zeroes_the_other(run_script, cut, expected):
    assert _codes_lines(run_script(TWO_VIEWS_FIT.format(keras="tf_keras", cut=cut))) == expected


# -- 3. steps compiled with XLA -------------------------------------------------------------
# An XLA cluster cannot call back into Python, so the value checks of a traced step were
# left out of it: GC201/GC202/GC204 were silent on ``jit_compile=True``. In a check the
# function is traced without XLA (same ops), and its values are checked; the look-alike
# (no bug) stays silent. Under ``watch()`` the program's XLA functions are left as they
# are, and a warning says their values are not checked.
XLA_STEP = """\
import numpy as np
import tensorflow as tf
import {keras} as keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.1)
x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
y = np.ones((16, 1), "float32")


@tf.function(jit_compile=True)
def step(x, y):
    with tf.GradientTape() as tape:
        loss = {loss}
    g = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(g, model.trainable_variables))
    return loss


for _ in range(2):
    step(x, y)
"""
XLA_CASES = pytest.mark.parametrize(
    ("loss", "expected"),
    [
        ("tf.reduce_mean(tf.square(tf.sign(model(x)) - y))", [("GC201", 14)]),
        ("tf.reduce_mean(tf.math.log(tf.nn.relu(model(x) - 1e6)))", [("GC204", 14)]),
        ("tf.reduce_mean(tf.square(tf.tanh(model(x)) - y))", []),
    ],
    ids=["sign", "log_zero", "correct"],
)


@XLA_CASES
def test_xla_step_values_checked(run_script, loss, expected):
    assert _codes_lines(run_script(XLA_STEP.format(keras="keras", loss=loss))) == expected


@pytest.mark.keras2
@needs_tf_keras
@XLA_CASES
def test_tf_keras_xla_step_values_checked(run_script, loss, expected):
    assert _codes_lines(run_script(XLA_STEP.format(keras="tf_keras", loss=loss))) == expected


XLA_FIT = """\
import numpy as np
import tensorflow as tf
import {keras} as keras


class Squash(keras.layers.Layer):
    def call(self, x):
        return {squash}


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1), Squash()])
model.compile(optimizer="sgd", loss="mse", jit_compile=True)
x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
model.fit(x, np.ones((16, 1), "float32"), epochs=1, batch_size=8, verbose=0)
"""
XLA_FIT_CASES = pytest.mark.parametrize(
    ("squash", "expected"), [("tf.sign(x)", [("GC201", 8)]), ("tf.tanh(x)", [])], ids=["sign", "tanh"]
)


@XLA_FIT_CASES
def test_fit_jit_compile_values_checked(run_script, squash, expected):
    assert _codes_lines(run_script(XLA_FIT.format(keras="keras", squash=squash))) == expected


@pytest.mark.keras2
@needs_tf_keras
@XLA_FIT_CASES
def test_tf_keras_fit_jit_compile_values_checked(run_script, squash, expected):
    assert _codes_lines(run_script(XLA_FIT.format(keras="tf_keras", squash=squash))) == expected


XLA_WATCH = """\
import warnings

import numpy as np
import tensorflow as tf
import keras

import gradcheck

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.ones((4, 4), "float32")


@tf.function(jit_compile=True)
def grads():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
    return tape.gradient(loss, model.trainable_variables)


with warnings.catch_warnings(record=True) as caught, gradcheck.watch():
    warnings.simplefilter("always")
    grads()
print("XLA-WARNINGS", sum("not checked" in str(w.message) for w in caught))
"""


def test_watch_xla_function_says_values_not_checked(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    path = tmp_path / "watch_xla.py"
    path.write_text(XLA_WATCH, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "XLA-WARNINGS 1" in out.stdout, out.stdout + out.stderr[-2000:]


# -- 4. an actor-critic advantage read back from a TensorArray in a while loop -------------
# TensorFlow's actor-critic tutorial (keras-io#194 names it): the episode is rolled out in a
# ``tf.while_loop`` (autograph's ``for t in tf.range``) writing the action probabilities and
# the critic's values into two ``TensorArray``s; the policy loss weighs ``log(probs)`` by
# ``returns - values`` without ``tf.stop_gradient``. The loop is one op reading every weight,
# so which head each stacked output used is read in its body: GC203 at the advantage, as in
# eager code. The stopped advantage is silent.
EPISODE = """\
import numpy as np
import tensorflow as tf
import {keras} as keras


class ActorCritic(keras.Model):
    def __init__(self):
        super().__init__()
        self.common = keras.layers.Dense(16, activation="relu")
        self.actor = keras.layers.Dense(2)
        self.critic = keras.layers.Dense(1)

    def call(self, x):
        h = self.common(x)
        return self.actor(h), self.critic(h)


model = ActorCritic()
opt = keras.optimizers.Adam(0.01)


def run_episode(state):
    probs = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    values = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    rewards = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for t in tf.range(5):
        logits, value = model(state)
        probs = probs.write(t, tf.nn.softmax(logits)[0, 0])
        values = values.write(t, value[0, 0])
        rewards = rewards.write(t, tf.reduce_sum(state))
        state = state * 0.9
    return probs.stack(), values.stack(), rewards.stack()


{decorator}
def train_step(state):
    with tf.GradientTape() as tape:
        probs, values, rewards = run_episode(state)
        returns = tf.math.cumsum(rewards, reverse=True)
        advantage = {advantage}
        loss = -tf.reduce_sum(tf.math.log(probs) * advantage) + tf.reduce_sum(tf.square(returns - values))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


for _ in range(2):
    train_step(tf.constant(np.random.default_rng(0).normal(size=(1, 4)), tf.float32))
"""
EPISODE_CASES = pytest.mark.parametrize(
    ("advantage", "expected"),
    [("returns - values", [("GC203", 40)]), ("tf.stop_gradient(returns - values)", [])],
    ids=["unstopped", "stopped"],
)


@DECORATORS
@EPISODE_CASES
def test_advantage_from_a_tensor_array_loop(run_script, decorator, advantage, expected):
    result = run_script(EPISODE.format(keras="keras", decorator=decorator, advantage=advantage))
    assert _codes_lines(result) == expected
    for finding in result.findings:  # the shared trunk and the critic, never the actor's head
        assert finding.variables and not any("dense_1" in v for v in finding.variables), finding.variables


@pytest.mark.keras2
@needs_tf_keras
@DECORATORS
@EPISODE_CASES
def test_tf_keras_advantage_from_a_tensor_array_loop(run_script, decorator, advantage, expected):
    result = run_script(EPISODE.format(keras="tf_keras", decorator=decorator, advantage=advantage))
    assert _codes_lines(result) == expected


# -- 5. issue 36 §3's other shapes, under both Keras ------------------------------------------
# A DDPG actor whose tanh saturates on unscaled observations (every actor weight gets an
# exactly-zero gradient through the critic), and a NeRF-like density head whose ReLU is dead
# on the whole batch under ``fit``. Scaled inputs / a live bias: silent.
DDPG_ACTOR = """\
import numpy as np
import tensorflow as tf
import {keras} as keras

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
states = tf.constant(rng.normal(size=(32, 3)) * {scale}, tf.float32)
actor = keras.Sequential([keras.Input((3,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1, activation="tanh")])
s_in, a_in = keras.Input((3,)), keras.Input((1,))
h = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()([s_in, a_in]))
critic = keras.Model([s_in, a_in], keras.layers.Dense(1)(h))
opt = keras.optimizers.Adam(1e-3)


{decorator}
def actor_step(s):
    with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(critic([s, actor(s)]))
    grads = tape.gradient(loss, actor.trainable_variables)
    opt.apply_gradients(zip(grads, actor.trainable_variables))


for _ in range(2):
    actor_step(states)
"""
DDPG_CASES = pytest.mark.parametrize(
    ("scale", "expected"), [("1e4", [("GC201", 8)]), ("0.5", [])], ids=["unscaled", "scaled"]
)


@DECORATORS
@DDPG_CASES
def test_ddpg_actor_tanh_saturated_on_unscaled_states(run_script, decorator, scale, expected):
    assert _codes_lines(run_script(DDPG_ACTOR.format(keras="keras", decorator=decorator, scale=scale))) == expected


@pytest.mark.keras2
@needs_tf_keras
@DECORATORS
@DDPG_CASES
def test_tf_keras_ddpg_actor_tanh_saturated_on_unscaled_states(run_script, decorator, scale, expected):
    assert _codes_lines(run_script(DDPG_ACTOR.format(keras="tf_keras", decorator=decorator, scale=scale))) == expected


DENSITY_HEAD = """\
import numpy as np
import {keras} as keras

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 5)).astype("float32")
inputs = keras.Input((5,))
h = keras.layers.Dense(32, activation="relu")(inputs)
rgb = keras.layers.Dense(3, activation="sigmoid", name="rgb")(h)
density = keras.layers.Dense(1, activation="relu", bias_initializer=keras.initializers.Constant({bias}), name="density")(h)
model = keras.Model(inputs, [rgb, density])
model.compile(optimizer="adam", loss=["mse", "mse"])
targets = [rng.uniform(size=(64, 3)).astype("float32"), rng.uniform(size=(64, 1)).astype("float32")]
model.fit(x, targets, batch_size=32, epochs=1, verbose=0)
"""
DENSITY_CASES = pytest.mark.parametrize(
    ("bias", "expected"), [("-100.0", [("GC201", 9)]), ("0.1", [])], ids=["dead", "alive"]
)


@DENSITY_CASES
def test_fit_density_head_relu_dead_on_the_batch(run_script, bias, expected):
    result = run_script(DENSITY_HEAD.format(keras="keras", bias=bias))
    assert _codes_lines(result) == expected
    assert all(sorted(f.variables) == ["density/bias", "density/kernel"] for f in result.findings)


@pytest.mark.keras2
@needs_tf_keras
@DENSITY_CASES
def test_tf_keras_fit_density_head_relu_dead_on_the_batch(run_script, bias, expected):
    assert _codes_lines(run_script(DENSITY_HEAD.format(keras="tf_keras", bias=bias))) == expected
