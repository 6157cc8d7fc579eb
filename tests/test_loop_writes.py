"""A traced loop whose body drops the TensorArray a write returned (real-world 1041): the
loop's outputs no longer depend on the body's work, TensorFlow gives the weights zeros (not
None: the loop's gradient is computed for all its inputs at once), and the line to change is
the write. Found for zero sources no frontier explains: the loop's inputs are the
variables' handles, so no frontier is seen at the loop itself."""

from __future__ import annotations

import pytest

STEP = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
cell = keras.layers.Dense(4, activation="tanh")
x0 = np.random.rand(8, 4).astype("float32")
target = np.random.rand(3, 8, 4).astype("float32")
cell(x0)


@tf.function
def train_step(x0, target):
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[None, 4])

        def body(t, y, ta):
            y = cell(y)
            {write}
            return t + 1, y, ta

        _, _, ta = tf.while_loop(lambda t, *_: t < 3, body, [0, x0, ta])
        loss = tf.reduce_mean(tf.square(ta.stack() - target))
    return tape.gradient(loss, cell.trainable_variables)


train_step(x0, target)
"""
WRITE_LINE = 19


def test_a_write_whose_result_is_dropped_is_gc108_at_the_write(run_script):
    result = run_script(STEP.format(write="ta.write(t, y)"))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC108", WRITE_LINE)], [
        f"{f.line}: {f.code} {f.message}" for f in result.findings
    ]
    finding = result.findings[0]
    assert sorted(finding.variables) == ["dense/bias", "dense/kernel"]
    assert "ta = ta.write(t, y)" in finding.fix


@pytest.mark.parametrize("write", ["ta = ta.write(t, y)", "ta = ta.write(t, y * 0.5 + 0.5)"])
def test_a_write_whose_result_is_kept_is_silent(run_script, write):
    result = run_script(STEP.format(write=write))
    assert result.error is None and result.findings == [], [f"{f.line}: {f.code} {f.message}" for f in result.findings]
