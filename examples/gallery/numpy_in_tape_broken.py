"""Broken: the loss is computed with NumPy inside the tape.

The prediction leaves TensorFlow with ``.numpy()``, the squared error is computed by
NumPy, and the result comes back as a new constant tensor with no history. The tape
records TensorFlow ops only, so the loss no longer depends on any weight as far as it
knows: every gradient is ``None`` and ``apply_gradients`` stops with
``ValueError: No gradients provided for any variable.``

    python examples/gallery/numpy_in_tape_broken.py     # the ValueError
    gradcheck examples/gallery/numpy_in_tape_broken.py  # GC105 at the .numpy() line

The fix (numpy_in_tape_fixed.py): the same arithmetic with TensorFlow ops.
(Under ``tf.function`` the same code fails at trace time instead, because a symbolic
tensor has no ``.numpy()``; gradcheck reports that as GC105 too.)
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
            squared_error = np.square(prediction.numpy() - y)  # expect: GC105
            loss = tf.reduce_mean(squared_error)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if step == 1 or step % 25 == 0:
            print(f"step {step}: mean squared error {float(loss):.4f}")
