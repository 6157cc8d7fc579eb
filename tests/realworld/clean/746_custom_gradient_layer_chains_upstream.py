"""Clean control 746 (expected clean).

A Keras layer whose matmul has a hand-written gradient with respect to its input and its
kernel (the `variables` argument of the gradient function); both chain the upstream
gradient, and a gradient-scaling identity multiplies dy by a constant. Trained by fit.
Setting: Keras 3 custom layers with tf.custom_gradient, model.fit (graph mode).
"""
import keras
import numpy as np
import tensorflow as tf


class CustomMatMul(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform")

    def call(self, x):
        kernel = self.kernel

        @tf.custom_gradient
        def matmul(x):
            y = tf.matmul(x, kernel)

            def grad(dy, variables=None):
                return tf.matmul(dy, kernel, transpose_b=True), [tf.matmul(x, dy, transpose_a=True)]

            return y, grad

        return matmul(x)


@tf.custom_gradient
def scale_grad(x):
    return tf.identity(x), lambda dy: 0.5 * dy


class ScaleGrad(keras.layers.Layer):
    def call(self, x):
        return scale_grad(x)


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((5,)), CustomMatMul(8), ScaleGrad(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.randn(64, 5).astype("float32"), np.random.randn(64, 1).astype("float32"),
          batch_size=32, epochs=1, verbose=0)
