"""Real-world case 312.

Source: https://github.com/jax-ml/jax/pull/29485
Bug: "Fix incorrect gradient in custom_gradient example": the documented custom-gradient
example returns x ** 2 with the gradient g * x instead of g * 2 * x (the reviewer kept it,
"on purpose to show that you can return any gradient you want"). Copied into a training
loop, such a gradient is half the true one and nothing complains.
Setting: TensorFlow tf.custom_gradient squared error in an eager custom loop, Keras 3
Sequential regression model.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def squared(x):
    return x**2, lambda g: g * x


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
