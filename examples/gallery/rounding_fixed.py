"""Fixed: round with a straight-through estimator.

Pair of rounding_broken.py. ``y + tf.stop_gradient(tf.round(y) - y)`` equals
``tf.round(y)`` in the forward pass, while its gradient with respect to ``y`` is 1: the
stop_gradient sits on a side branch, and the path through ``y`` stays open. (A smooth
surrogate, e.g. training on the unrounded prediction and rounding only for reporting,
works too.)

    python examples/gallery/rounding_fixed.py     # the error of the rounded count falls to about 0.1
    gradcheck examples/gallery/rounding_fixed.py  # no finding
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


def round_straight_through(y):
    """``tf.round`` forward, identity backward."""
    return y + tf.stop_gradient(tf.round(y) - y)


@tf.function
def train_step(x, counts):
    with tf.GradientTape() as tape:
        predicted = round_straight_through(model(x, training=True))
        loss = tf.reduce_mean(tf.abs(counts - predicted))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, counts = make_data()
    model = make_model()  # train_step reads the module globals model and optimizer
    optimizer = keras.optimizers.Adam(1e-2)
    for epoch in range(1, 301):
        loss = train_step(x, counts)
        if epoch % 100 == 0:
            print(f"epoch {epoch}: mean absolute error of the rounded count {float(loss):.3f}")
