"""Fixed: keep the loss in TensorFlow ops inside the tape.

Pair of numpy_in_tape_broken.py. ``tf.square`` / ``tf.reduce_mean`` (or ``keras.ops``)
instead of NumPy, and no ``.numpy()`` on a tensor that feeds the loss: the tape records
every op from the weights to the loss. NumPy is fine *outside* the tape, e.g. for logging.

    python examples/gallery/numpy_in_tape_fixed.py     # the error falls from ~0.29 to ~0.017
    gradcheck examples/gallery/numpy_in_tape_fixed.py  # no finding
"""

import keras
import numpy as np
import tensorflow as tf


def make_data(n=256, seed=0):
    """A noisy sine."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, size=(n, 1)).astype("float32")
    y = (np.sin(x) + 0.1 * rng.normal(size=(n, 1))).astype("float32")
    return x, y


def make_model():
    return keras.Sequential([keras.Input(shape=(1,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(1)])


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = make_model()
    optimizer = keras.optimizers.Adam(1e-2)
    for step in range(1, 101):
        with tf.GradientTape() as tape:
            prediction = model(x, training=True)
            squared_error = tf.square(prediction - y)
            loss = tf.reduce_mean(squared_error)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if step == 1 or step % 25 == 0:
            print(f"step {step}: mean squared error {float(loss):.4f}")
