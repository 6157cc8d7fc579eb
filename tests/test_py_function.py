"""A ``tf.py_function`` in a training step: the check asks its gradient beside the user's
(``capture/hooks/pyfunc``), and a correct program must still run and come out clean, in a
traced step and eagerly. A ``tf.numpy_function`` there, which has no gradient, is still GC106."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import run_cli

SCRIPT = textwrap.dedent(
    """\
    import sys

    import keras
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    # trainable, read by the loss, not asked for: the check asks its own gradient of the loss
    head = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    opt = keras.optimizers.SGD(0.1)
    x = tf.random.stateless_normal((8, 4), seed=(1, 2))


    def step(x):
        with tf.GradientTape() as tape:
            h = model(x)
            g = tf.ensure_shape(tf.{wrap}(lambda a: a * 2.0, [h], h.dtype), h.shape)
            loss = tf.reduce_mean(tf.square(g)){extra}
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    step = step if sys.argv[1:] == ["eager"] else tf.function(step)
    for _ in range(3):
        print(float(step(x)))
    """
)


@pytest.mark.parametrize("mode", ["graph", "eager"])
def test_a_py_function_in_the_step_runs_and_is_clean(tmp_path, mode):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(wrap="py_function", extra=" + 0.0 * tf.reduce_mean(head(h))"))
    args = ["--", "eager"] if mode == "eager" else []
    proc = run_cli("--format", "json", str(script), *args)
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]  # was GC901 KeyError: b'pyfunc_4' (graph)
    assert record["status"] == "checked" and record["findings"] == [], record
    assert proc.returncode == 0


@pytest.mark.parametrize("mode", ["graph", "eager"])
def test_a_numpy_function_in_the_step_is_still_gc106(tmp_path, mode):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(wrap="numpy_function", extra=""))
    args = ["--", "eager"] if mode == "eager" else []
    proc = run_cli("--format", "json", str(script), *args)
    (record,) = json.loads(proc.stdout)["files"]
    assert [(f["code"], f["line"]) for f in record["findings"]] == [("GC106", 16)], record
