"""Clean control 747 (expected clean).

Custom gradients that transform the upstream gradient without a factor of the local
derivative: a gradient-clipping identity (clip_by_norm of dy), a sign-of-gradient identity,
and a gradient reversal layer (-dy) of domain-adversarial training. Each depends on dy.
Setting: Keras 3 functional model, eager custom loop, default flags.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def clip_gradient(x):
    return tf.identity(x), lambda dy: tf.clip_by_norm(dy, 0.1)


@tf.custom_gradient
def sign_gradient(x):
    return tf.identity(x), lambda dy: tf.sign(dy) * 1e-2


@tf.custom_gradient
def reverse_gradient(x):
    return tf.identity(x), lambda dy: -dy


keras.utils.set_random_seed(0)
inputs = keras.Input((6,))
features = keras.layers.Dense(8, activation="relu")(inputs)
label = keras.layers.Dense(1)(keras.layers.Lambda(clip_gradient)(features))
domain = keras.layers.Dense(1)(keras.layers.Lambda(reverse_gradient)(keras.layers.Lambda(sign_gradient)(features)))
model = keras.Model(inputs, [label, domain])
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.randn(32, 6).astype("float32")
y = np.random.randn(32, 1).astype("float32")
d = np.random.randint(0, 2, size=(32, 1)).astype("float32")
with tf.GradientTape() as tape:
    y_pred, d_pred = model(x)
    loss = tf.reduce_mean(tf.square(y_pred - y)) + tf.reduce_mean(
        keras.losses.binary_crossentropy(d, d_pred, from_logits=True))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
