"""GC203 points where the target enters the loss when the value it is made from also feeds
the loss another way: there a ``tf.stop_gradient`` keeps the other path, where the value is
made it would cut it (SimSiam's projections are each a target in one term and the
predictor's input in the other)."""

from __future__ import annotations

import textwrap

import pytest

SIMSIAM = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
encoder = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
predictor = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(8)])
optimizer = keras.optimizers.SGD(0.01)


def negative_cosine(p, z):
    p = tf.math.l2_normalize(p, axis=1)
    z = tf.math.l2_normalize({target}, axis=1)
    return -tf.reduce_mean(tf.reduce_sum(p * z, axis=1))


{decorator}
def train_step(view1, view2):
    with tf.GradientTape() as tape:
        z1, z2 = encoder(view1), encoder(view2)
        p1, p2 = predictor(z1), predictor(z2)
        loss = 0.5 * negative_cosine(p1, z2) + 0.5 * negative_cosine(p2, z1)
    variables = encoder.trainable_variables + predictor.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


x = np.random.rand(32, 8).astype("float32")
for step in range(3):
    train_step(x + 0.1 * np.random.rand(32, 8).astype("float32"), x)
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_a_shared_target_is_reported_where_it_enters_the_loss(run_script, decorator):
    result = run_script(textwrap.dedent(SIMSIAM.format(target="z", decorator=decorator)))
    assert [(f.code, f.line) for f in result.findings] == [("GC203", 13)], [f.message for f in result.findings]


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_the_target_stopped_where_it_enters_is_clean(run_script, decorator):
    result = run_script(textwrap.dedent(SIMSIAM.format(target="tf.stop_gradient(z)", decorator=decorator)))
    assert result.findings == [] and result.error is None
