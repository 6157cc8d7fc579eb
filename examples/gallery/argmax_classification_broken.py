"""Broken: a classification loss built on argmax (the error rate used as the loss).

The error rate is what we want to lower, but it is computed from ``tf.argmax`` of the
logits: an integer class index, which carries no gradient. Keras 3 stops with
``ValueError: No gradients provided for any variable.``

    python examples/gallery/argmax_classification_broken.py     # the ValueError
    gradcheck examples/gallery/argmax_classification_broken.py  # GC101 at the argmax line

The fix (argmax_classification_fixed.py): train on the logits with a cross-entropy loss,
keep argmax for the accuracy metric.
"""

import keras
import numpy as np
import tensorflow as tf

NUM_CLASSES = 3


def make_data(n=512, seed=0):
    """Three Gaussian blobs in the plane."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 3.0], [-3.0, -2.0], [3.0, -2.0]])
    labels = rng.integers(0, NUM_CLASSES, size=n)
    points = centers[labels] + rng.normal(size=(n, 2))
    return points.astype("float32"), labels.astype("int32")


def make_model():
    return keras.Sequential(
        [keras.Input(shape=(2,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(NUM_CLASSES)]
    )


def error_rate(y_true, y_pred):
    predicted = tf.argmax(y_pred, axis=1, output_type=tf.int32)  # expect: GC101
    wrong = tf.not_equal(predicted, tf.reshape(tf.cast(y_true, tf.int32), [-1]))
    return tf.reduce_mean(tf.cast(wrong, tf.float32))


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=error_rate, metrics=["accuracy"])
    model.fit(x, y, epochs=5, batch_size=64, verbose=2)
