"""Clean control 725 (look-alike of case 325).

Source: https://github.com/tensorflow/tensorflow/issues/2540
The same hand-written ELU with exp taken of the negative part only: no overflow in the
branch that is not selected.
"""
import keras
import numpy as np
import tensorflow as tf


def elu(x):
    return tf.where(x >= 0.0, x, tf.exp(tf.minimum(x, 0.0)) - 1.0)


keras.utils.set_random_seed(0)
model = keras.Sequential(
    [keras.Input((8,)), keras.layers.Dense(32, activation=elu), keras.layers.Dense(1)]
)
model.compile(optimizer="adam", loss="mse")
x = np.random.uniform(0.0, 600.0, size=(128, 8)).astype("float32")  # raw sensor readings
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
