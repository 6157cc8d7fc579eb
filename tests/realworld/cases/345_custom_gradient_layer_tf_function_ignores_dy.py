"""Real-world case 345.

Source: https://github.com/tensorflow/tensorflow/issues/30883
Bug: the "standard definition of ReLU's gradient" written as the whole gradient of a
custom-gradient op inside a layer's call: 1 where x > 0, 0 elsewhere, without dy.
Setting: Keras 3 custom layer calling a tf.custom_gradient function, @tf.function train
step, default flags.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def leaky(x):
    def grad(dy):
        return tf.where(x > 0, 1.0, 0.1)

    return tf.where(x > 0, x, 0.1 * x), grad


class LeakyDense(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.dense = keras.layers.Dense(units)

    def call(self, x):
        return leaky(self.dense(x))


keras.utils.set_random_seed(0)
hidden = LeakyDense(8)
head = keras.layers.Dense(1)
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(head(hidden(x)) - y))
    variables = hidden.trainable_variables + head.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


train_step(np.random.randn(32, 5).astype("float32"), np.random.randn(32, 1).astype("float32"))
