"""Clean control 711 (look-alike of case 311).

Source: https://github.com/tensorflow/tensorflow/issues/30883
The same custom ReLU whose gradient multiplies the upstream gradient by the local
derivative: it matches finite differences.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def relu(x):
    def grad(dy):
        return dy * tf.cast(x > 0, dy.dtype)

    return tf.nn.relu(x), grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation=relu), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
x = np.random.randn(128, 10).astype("float32")
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
