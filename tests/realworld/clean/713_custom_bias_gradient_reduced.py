"""Clean control 713 (look-alike of case 313).

Source: https://github.com/pytorch/pytorch/issues/65244
The same custom bias addition whose gradient reduces the bias gradient over the batch axis.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def add_bias(x, b):
    def grad(dy):
        return dy, tf.reduce_sum(dy, axis=0)

    return x + b, grad


class BiasedDense(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, x):
        return add_bias(tf.matmul(x, self.kernel), self.bias.value)


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((5,)), BiasedDense(4), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.randn(16, 5).astype("float32")
y = np.random.randn(16, 1).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
