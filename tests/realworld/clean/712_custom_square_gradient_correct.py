"""Clean control 712 (look-alike of case 312).

Source: https://github.com/jax-ml/jax/pull/29485
The same custom squared error with the correct gradient g * 2 * x.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def squared(x):
    return x**2, lambda g: g * 2.0 * x


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(0.05)
x = np.random.randn(64, 3).astype("float32")
y = np.random.randn(64, 1).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(squared(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
