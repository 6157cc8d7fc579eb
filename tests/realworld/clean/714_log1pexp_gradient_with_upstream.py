"""Clean control 714 (look-alike of case 314).

Source: https://github.com/tensorflow/tensorflow/pull/41927
The documented log1pexp: its gradient multiplies the upstream gradient dy.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation=log1pexp), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(3):
    train_step(np.random.randn(32, 4).astype("float32"), np.random.randn(32, 1).astype("float32"))
