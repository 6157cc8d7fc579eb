"""Real-world case 314.

Source: https://github.com/tensorflow/tensorflow/pull/41927
Bug: "There is no proper explanation of dy in the docs" of tf.custom_gradient: the
log1pexp example's gradient is dy * (1 - 1 / (1 + e)), and code written from the formula
alone returns 1 - 1 / (1 + e), the local derivative without the upstream gradient: correct
only when dy is 1, i.e. when log1pexp is the loss itself.
Setting: Keras 3 Sequential model with a numerically stable softplus (log1pexp) as the
hidden activation, tf.function custom train step.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return 1 - 1 / (1 + e)

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
