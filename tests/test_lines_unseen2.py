"""Issue 36 §2, round 3: the line a user changes, on code nobody here has seen. Each test is
a mechanism (how a cause is named, where a finding points), with a correct look-alike that
stays silent, eagerly and in a ``tf.function``."""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

from tests.conftest import run_cli

MODES = pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])


def _source(template: str, **fields) -> str:
    return textwrap.dedent(template).format(**fields)


def _found(result) -> list[tuple]:
    assert result.error is None, result.error
    return [(f.code, f.line, f.variables) for f in result.findings]


# -- 1. a forward pass before the tape, its activation asked for as a source -------------

GRAD_CAM = """\
    import keras
    import numpy as np
    import tensorflow as tf

    inp = keras.Input((8, 8, 1))
    conv = keras.layers.Conv2D(2, 3, name="conv")(inp)
    out = keras.layers.Dense(3, name="head")(keras.layers.Flatten()(conv))
    model = keras.Model(inp, [out, conv])
    image = tf.constant(np.random.default_rng(0).random((1, 8, 8, 1)).astype("float32"))


    {decorator}
    def grad_cam(image):
        {before}
        with tf.GradientTape() as tape:
            {inside}
            score = preds[:, 0] * {scale}
        return tape.gradient(score, conv_out)


    grads = grad_cam(image)
    print(float(tf.reduce_sum(grads)))
    """


@MODES
def test_an_activation_computed_before_the_tape_is_gc109_at_the_forward_pass(run_script, decorator):
    """Grad-CAM's ``conv_out`` made by a model call before the tape: the score depends on it
    only through ops the tape never recorded, so ``tape.watch`` would not help: GC109 at the
    forward pass (line 14), not GC110 "never watched"."""
    source = _source(
        GRAD_CAM,
        decorator=decorator,
        before="preds, conv_out = model(image)",
        inside="pass",
        scale=2.0 if decorator else 3.0,
    )
    assert _found(run_script(source)) == [("GC109", 14, ["conv_out"])]


@MODES
def test_grad_cam_with_the_forward_pass_inside_the_tape_is_silent(run_script, decorator):
    source = _source(
        GRAD_CAM,
        decorator=decorator,
        before="pass",
        inside="preds, conv_out = model(image)",
        scale=4.0 if decorator else 5.0,
    )
    assert _found(run_script(source)) == []


SALIENCY = """\
    import keras
    import numpy as np
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="head")])
    {decorator}
    def saliency(x):
        with tf.GradientTape() as tape:
            {watch}
            score = tf.reduce_sum(model(x)) * {scale}
        return tape.gradient(score, x)


    grads = saliency(tf.constant(np.random.default_rng(0).random((3, 4)).astype("float32")))
    print(float(tf.reduce_sum(grads)))
    """


@MODES
def test_an_input_the_tape_uses_but_never_watched_stays_gc110(run_script, decorator):
    """The look-alike of the Grad-CAM above: a function's argument fed to the model inside
    the tape, never watched. Watching it is the fix (GC110, not GC109), at the request
    (line 11) as the static engine and docs/rules/GC110.md point for an argument."""
    source = _source(SALIENCY, decorator=decorator, watch="pass", scale=2.0 if decorator else 3.0)
    assert _found(run_script(source)) == [("GC110", 11, ["x"])]


@MODES
def test_an_input_watched_before_its_use_is_silent(run_script, decorator):
    source = _source(SALIENCY, decorator=decorator, watch="tape.watch(x)", scale=4.0 if decorator else 5.0)
    assert _found(run_script(source)) == []


# -- 2. an integer source is pointed at the cast that made it one -------------------------

WATCH_CAST = """\
    import keras
    import numpy as np
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4, name="score")])
    data = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")


    {decorator}
    def ssm_loss(x):
        x = {cast}
        with tf.GradientTape() as tape:
            tape.watch(x)
            scores = model(tf.cast(x, tf.float32)) * {scale}
            v = tf.reduce_sum(scores)
        return tape.gradient(v, x)


    print(ssm_loss(tf.constant(data)))
    """


@MODES
@pytest.mark.parametrize(
    "cast", ["tf.cast(x, tf.int32)", "tf.cast(tf.cast(x, tf.int64), tf.int32)"], ids=["int", "recast"]
)
def test_an_integer_source_is_gc114_at_the_cast_that_made_it(run_script, decorator, cast):
    """``x = tf.cast(x, tf.int32)`` before ``tape.watch(x)``: the line to change is the cast
    (line 11), not the first use of ``x`` (line 14), also through an integer recast."""
    scale = (2.0 if decorator else 3.0) + (0.5 if "int64" in cast else 0.0)
    source = _source(WATCH_CAST, decorator=decorator, cast=cast, scale=scale)
    assert _found(run_script(source)) == [("GC114", 11, ["x"])]


@MODES
def test_a_float_cast_before_the_watch_is_silent(run_script, decorator):
    source = _source(WATCH_CAST, decorator=decorator, cast="tf.cast(x, tf.float32)", scale=4.0 if decorator else 5.0)
    assert _found(run_script(source)) == []


# -- tf_keras -------------------------------------------------------------------------------

GRAD_CAM_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

inp = keras.Input((8, 8, 1))
conv = keras.layers.Conv2D(2, 3, name="conv")(inp)
out = keras.layers.Dense(3, name="head")(keras.layers.Flatten()(conv))
model = keras.Model(inp, [out, conv])
image = tf.constant(np.random.default_rng(0).random((1, 8, 8, 1)).astype("float32"))


def grad_cam(image):
    {before}
    with tf.GradientTape() as tape:
        {inside}
        score = preds[:, 0]
    return tape.gradient(score, conv_out)


grads = grad_cam(image)
print(float(tf.reduce_sum(grads)))
"""


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
@pytest.mark.parametrize("hoisted", [True, False], ids=["hoisted", "inside"])
def test_grad_cam_under_tf_keras(tmp_path, hoisted):
    forward = "preds, conv_out = model(image)"
    script = tmp_path / "grad_cam.py"
    script.write_text(
        GRAD_CAM_TF_KERAS.format(before=forward if hoisted else "pass", inside="pass" if hoisted else forward),
        encoding="utf-8",
    )
    proc = run_cli(str(script), "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    found = [(f["code"], f["line"], f["variables"]) for f in record["findings"]]
    assert found == ([("GC109", 13, ["conv_out"])] if hoisted else [])


# -- 3. a stopped TD target does not hide a prediction computed before the tape -------------

DQN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    online = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    rng = np.random.default_rng(3)
    states = rng.normal(size=(32, 4)).astype("float32")
    next_states = rng.normal(size=(32, 4)).astype("float32")
    actions = rng.integers(0, 3, size=32)
    rewards = rng.normal(size=32).astype("float32")


    {decorator}
    def step():
        {before}
        with tf.GradientTape() as tape:
            {inside}
            td_target = tf.stop_gradient(rewards + {gamma} * tf.reduce_max(online(next_states), axis=1))
            q_taken = tf.reduce_sum(q * tf.one_hot(actions, 3), axis=1)
            loss = tf.reduce_mean(tf.square(td_target - q_taken))
        return tape.gradient(loss, online.trainable_variables)


    step()
    """
ONLINE = ["sequential/dense/bias", "sequential/dense/kernel", "sequential/dense_1/bias", "sequential/dense_1/kernel"]


@MODES
def test_a_q_network_run_before_the_tape_is_gc109_not_the_stopped_target(run_script, decorator):
    """``q = online(states)`` hoisted above the tape: the variables' only path on the tape is
    the TD target's, stopped on purpose. That stop is no cause (it was GC104 at line 18):
    the forward pass before the tape is (GC109, line 15)."""
    source = _source(
        DQN, decorator=decorator, before="q = online(states)", inside="pass", gamma=0.9 if decorator else 0.8
    )
    found = _found(run_script(source))
    assert [(code, line) for code, line, _ in found] == [("GC109", 15)]
    assert sorted(found[0][2]) == ONLINE


@MODES
def test_a_dqn_with_its_prediction_inside_the_tape_is_silent(run_script, decorator):
    source = _source(
        DQN, decorator=decorator, before="pass", inside="q = online(states)", gamma=0.7 if decorator else 0.6
    )
    assert _found(run_script(source)) == []


# -- 4. a nested tf.function traced before the variables it reads were initialized --------

NESTED = """\
    import keras
    import numpy as np
    import tensorflow as tf


    class Pool(keras.layers.Layer):
        def build(self, input_shape):
            self.proj = self.add_weight(name="proj", shape=(input_shape[-1], input_shape[-1]))

        {decorator}
        def project(self, x):
            return tf.tensordot(x, self.proj, axes=1)

        def call(self, x):
            return tf.reduce_sum(tf.vectorized_map(self.project, x), axis=1)


    class Net(keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.embed = keras.layers.Dense(4)
            self.pool = Pool(name="pool")

        def call(self, x):
            return self.pool(self.embed(x))


    model = Net()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((8, 5, 4), "float32"), np.ones((8, 4), "float32"), epochs=1, batch_size=4, verbose=0)
    """


def test_a_nested_function_traced_before_its_weight_was_initialized_is_gc116(run_script):
    """A Keras 3 layer built inside ``fit``'s trace, its weight read by a nested
    ``@tf.function`` (mapped with ``vectorized_map``) traced before the weight was
    initialized: that trace computed with the initializer's value, so the weight never
    reaches the loss. GC116 at the decorator (line 10), not GC108 at ``fit`` (line 30)."""
    found = _found(run_script(_source(NESTED, decorator="@tf.function")))
    assert found == [("GC116", 10, ["net/pool/proj"])]


def test_the_same_projection_without_a_nested_function_is_silent(run_script):
    assert _found(run_script(_source(NESTED, decorator=""))) == []


# -- a host escape in a loss tf_keras converts with autograph, though fit runs eagerly ------
# The loss function runs as autograph's generated copy, not in the user's file: the escape
# is at the user's line inside it, not at `model.fit` (826's shape).
EAGER_FIT_LOSS = """\
import numpy as np
import tensorflow as tf
import tf_keras as keras


def spectral_loss(y_true, y_pred):
    err = {body}
    return tf.convert_to_tensor(err, dtype=tf.float32)


model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)), keras.layers.Dense(2)])
model.compile(optimizer="adam", loss=spectral_loss, run_eagerly=True)
x = np.random.rand(16, 3).astype("float32")
model.fit(x, np.random.rand(16, 2).astype("float32"), batch_size=8, epochs=1, verbose=0)
"""


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("np.mean(np.square(y_true.numpy() - y_pred.numpy()), axis=1)", [("GC105", 7)]),
        ("tf.reduce_mean(tf.square(y_true - y_pred), axis=1)", []),
    ],
    ids=["numpy", "tf_ops"],
)
def test_escape_in_a_loss_autograph_converted_under_eager_fit(tmp_path, body, expected):
    script = tmp_path / "eager_fit_loss.py"
    script.write_text(EAGER_FIT_LOSS.format(body=body), encoding="utf-8")
    proc = run_cli(str(script), "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    assert [(f["code"], f["line"]) for f in record["findings"]] == expected
