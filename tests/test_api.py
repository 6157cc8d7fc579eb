"""The Python API in-process: check_step, check_model, watch, install, assert_gradients_flow."""

from __future__ import annotations

import io

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import gradcheck  # noqa: E402
from gradcheck import GradientFlowError  # noqa: E402


def _qnet(argmax: bool):
    class QNet(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(8, activation="relu", name="hidden")
            self.q = keras.layers.Dense(3, name="q")

        def call(self, x):
            return self.q(self.hidden(x))

        def train_step(self, data):
            (x, actions), y = data
            with tf.GradientTape() as tape:
                q = self(x, training=True)
                if argmax:
                    chosen = tf.cast(tf.argmax(q, axis=1), tf.float32)
                else:
                    chosen = tf.gather(q, actions, batch_dims=1)
                loss = tf.reduce_mean(tf.square(y - chosen))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

    keras.backend.clear_session()
    model = QNet()
    model.compile(optimizer=keras.optimizers.SGD(1.0))
    return model


BATCH = ((np.random.rand(8, 4).astype("float32"), np.random.randint(0, 3, 8)), np.random.rand(8).astype("float32"))


def test_check_model_reports_and_leaves_weights_unchanged():
    model = _qnet(argmax=True)
    model(BATCH[0][0])
    before = [w.copy() for w in model.get_weights()]
    report = gradcheck.check_model(model, BATCH)
    assert not report.ok
    (finding,) = report.findings
    assert finding.code == "GC101" and finding.call == "tf.argmax"
    assert finding.variables == ["q_net/hidden/bias", "q_net/hidden/kernel", "q_net/q/bias", "q_net/q/kernel"]
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_check_model_clean():
    report = gradcheck.check_model(_qnet(argmax=False), BATCH)
    assert report.ok and report.findings == []
    assert report.files[0].steps_checked == 1


def test_check_model_needs_a_compiled_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="compiled model"):
        gradcheck.check_model(model, (np.zeros((2, 4)), np.zeros((2, 1))))


def test_check_step_eager_and_graph():
    w = tf.Variable([[1.0], [2.0]], name="w")

    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.math.ceil(x @ w))
        return tape.gradient(loss, [w])

    for fn in (step, tf.function(step)):
        report = gradcheck.check_step(fn, tf.ones((3, 2)))
        (finding,) = report.findings
        assert finding.code == "GC102" and finding.variables == ["w"] and finding.op == "Ceil"


def test_assert_gradients_flow_message_is_the_text_diagnosis():
    model = _qnet(argmax=True)
    with pytest.raises(AssertionError) as excinfo:
        gradcheck.assert_gradients_flow(model, BATCH)
    assert isinstance(excinfo.value, GradientFlowError)
    text = str(excinfo.value)
    assert ": GC101 tf.argmax returns integer indices" in text
    assert "^" in text and "= fix:" in text and "= path:" in text


def test_assert_gradients_flow_select_and_allow_none():
    w = tf.Variable(1.0, name="frozen_w")
    v = tf.Variable(1.0, name="trained_v")

    def step():
        with tf.GradientTape() as tape:
            loss = v * 2.0 + tf.round(w)
        return tape.gradient(loss, [w, v])

    gradcheck.assert_gradients_flow(step, allow_none=["frozen_*"])
    gradcheck.assert_gradients_flow(step, select=["GC101"])  # GC102 is not selected
    with pytest.raises(GradientFlowError):
        gradcheck.assert_gradients_flow(step)


def test_watch_collects_without_changing_training():
    w = tf.Variable(3.0, name="w")
    optimizer = keras.optimizers.SGD(0.1)
    with gradcheck.watch() as report:
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = tf.square(w) + tf.floor(w)
            grads = tape.gradient(loss, [w])
            optimizer.apply_gradients(zip(grads, [w]))
    assert report.ok  # floor is beside a differentiable path: w still has a gradient
    assert float(w.numpy()) < 3.0  # the updates were applied

    u = tf.Variable(1.0, name="u")
    with gradcheck.watch() as report:
        with tf.GradientTape() as tape:
            loss = tf.floor(u)
        tape.gradient(loss, u)
    assert [f.code for f in report.findings] == ["GC102"]


def test_install_prints_and_enriches_the_keras_error():
    stream = io.StringIO()
    model = _qnet(argmax=True)
    gradcheck.install(stream=stream)
    try:
        with pytest.raises(ValueError) as excinfo:
            model.fit(BATCH[0], BATCH[1], epochs=1, verbose=0)
    finally:
        gradcheck.uninstall()
    assert "No gradients provided for any variable" in str(excinfo.value)
    assert "gradcheck diagnosis" in str(excinfo.value) and "GC101" in str(excinfo.value)
    assert "GC101" in stream.getvalue()
    # uninstalled: TensorFlow is back to itself
    assert tf.GradientTape.gradient.__module__.startswith("tensorflow")


def test_the_keras_error_carries_only_what_starved_its_update():
    """An earlier, unrelated finding of the session (a floor on another variable) is not in
    the "No gradients provided" error of a later fit."""
    stream = io.StringIO()
    model = _qnet(argmax=True)
    gradcheck.install(stream=stream)
    try:
        u = tf.Variable(1.0, name="unrelated_u")
        with tf.GradientTape() as tape:
            loss = tf.floor(u)
        tape.gradient(loss, u)
        with pytest.raises(ValueError) as excinfo:
            model.fit(BATCH[0], BATCH[1], epochs=1, verbose=0)
    finally:
        gradcheck.uninstall()
    assert "GC102" in stream.getvalue()  # it was reported, when it happened
    message = str(excinfo.value)
    assert "GC101" in message and "GC102" not in message and "unrelated_u" not in message
