"""Broken: the prediction is rounded before the loss.

The model predicts how many items a basket holds, and the answer must be a whole number,
so the step rounds the prediction inside the tape. ``tf.round`` is a staircase: its
derivative is zero or undefined, TensorFlow registers no gradient for it, and every
weight gets ``None``; ``apply_gradients`` stops with
``ValueError: No gradients provided for any variable.``

    python examples/gallery/rounding_broken.py     # the ValueError
    gradcheck examples/gallery/rounding_broken.py  # GC102 at the tf.round line

The fix (rounding_fixed.py): a straight-through estimator, which rounds in the forward
pass and passes the gradient through unchanged in the backward pass.
"""

import keras
import numpy as np
import tensorflow as tf


def make_data(n=512, seed=0):
    """Item counts (0..9) that depend linearly on four features."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    counts = np.clip(np.round(4.5 + x @ np.array([1.5, -1.0, 0.5, 2.0])), 0, 9)
    return x, counts.astype("float32")[:, None]


def make_model():
    return keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])


@tf.function
def train_step(x, counts):
    with tf.GradientTape() as tape:
        predicted = tf.round(model(x, training=True))  # expect: GC102
        loss = tf.reduce_mean(tf.abs(counts - predicted))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, counts = make_data()
    model = make_model()  # train_step reads the module globals model and optimizer
    optimizer = keras.optimizers.Adam(1e-2)
    for epoch in range(1, 31):
        loss = train_step(x, counts)
        if epoch % 10 == 0:
            print(f"epoch {epoch}: mean absolute error of the rounded count {float(loss):.3f}")
