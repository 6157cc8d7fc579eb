"""Clean control 744 (expected clean).

A RealNVP-style affine coupling flow trained by maximum likelihood: z = x2 * exp(s(x1)) +
t(x1), and the negative log-likelihood 0.5 * z^2 + 0.5 * log(2 pi) - sum(s) uses the
network's own log-determinant. No target: every term must carry the gradient.
Setting: Keras 3 Dense conditioner, @tf.function train step.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
conditioner = keras.Sequential([keras.Input((2,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    x1, x2 = x[:, :2], x[:, 2:]
    with tf.GradientTape() as tape:
        st = conditioner(x1)
        log_scale, shift = tf.tanh(st[:, :2]), st[:, 2:]
        z2 = x2 * tf.exp(log_scale) + shift
        z = tf.concat([x1, z2], axis=1)
        log_det = tf.reduce_sum(log_scale, axis=1)
        log_pz = -0.5 * tf.reduce_sum(tf.square(z), axis=1) - 2.0 * np.log(2 * np.pi)
        nll = -tf.reduce_mean(log_pz + log_det)
    grads = tape.gradient(nll, conditioner.trainable_variables)
    optimizer.apply_gradients(zip(grads, conditioner.trainable_variables))
    return nll


for _ in range(2):
    train_step(np.random.randn(64, 4).astype("float32"))
