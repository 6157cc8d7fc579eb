"""Clean control 723 (look-alike of case 323).

Source: https://github.com/tensorflow/tensorflow/issues/27684
The same learnable log compression with the double tf.where: the log's input is made safe
where the branch is discarded, so its gradient stays finite.
"""
import keras
import numpy as np
import tensorflow as tf


class LogCompression(keras.layers.Layer):
    def build(self, input_shape):
        self.alpha = self.add_weight(shape=(), initializer="ones", name="alpha")

    def call(self, x):
        safe_x = tf.where(x > 0, x, tf.ones_like(x))
        return tf.where(x > 0, self.alpha * tf.math.log(safe_x), tf.zeros_like(x))


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((20,)), LogCompression(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
x = np.random.randn(128, 20).astype("float32")
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
