# ruff: noqa: B007, B905
"""Our own smoke program: a small WGAN-GP, two tapes and a gradient-penalty tape that
watches the interpolated images, under `tf.function`."""

import keras
import numpy as np
import tensorflow as tf

noise_dim = 4
generator = keras.Sequential(
    [keras.Input((noise_dim,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)]
)
discriminator = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
g_opt = keras.optimizers.Adam(1e-3)
d_opt = keras.optimizers.Adam(1e-3)
real_data = np.random.default_rng(5).normal(size=(32, 8)).astype("float32")


@tf.function
def train_step(real):
    noise = tf.random.normal((32, noise_dim))
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        fake = generator(noise, training=True)
        real_out = discriminator(real, training=True)
        fake_out = discriminator(fake, training=True)
        alpha = tf.random.uniform((32, 1))
        interpolated = alpha * real + (1.0 - alpha) * fake
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            interp_out = discriminator(interpolated, training=True)
        gp_grads = gp_tape.gradient(interp_out, interpolated)
        penalty = tf.reduce_mean((tf.norm(gp_grads, axis=1) - 1.0) ** 2)
        gen_loss = -tf.reduce_mean(fake_out)
        disc_loss = tf.reduce_mean(fake_out) - tf.reduce_mean(real_out) + 10.0 * penalty
    g_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    d_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    return gen_loss, disc_loss


for step in range(3):
    train_step(real_data)
