"""Real-world case 323.

Source: https://github.com/tensorflow/tensorflow/issues/27684
Bug: "nan appearing on False fork of tf.where propagates": tf.where(x >= 0, alpha *
tf.math.log(x), 0) with a trainable alpha; the log of the negative and zero inputs is NaN
and -inf, which the tf.where discards in the forward pass, but the gradient with respect
to alpha multiplies them by the zero gradient of the unused branch: NaN.
Setting: Keras 3 custom layer with a trainable log-compression coefficient (add_weight),
Sequential model, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf


class LogCompression(keras.layers.Layer):
    def build(self, input_shape):
        self.alpha = self.add_weight(shape=(), initializer="ones", name="alpha")

    def call(self, x):
        return tf.where(x >= 0, self.alpha * tf.math.log(x), tf.zeros_like(x))


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((20,)), LogCompression(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
x = np.random.randn(128, 20).astype("float32")
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
