# ruff: noqa: B007, B905
"""Our own multi-phase smoke program: a conditional generator warmed up on a reconstruction
loss (custom eager loop), then the adversarial loop (two tapes, `tf.function`)."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(7)
cond = rng.normal(size=(32, 4)).astype("float32")
real = rng.normal(size=(32, 8)).astype("float32")
generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
discriminator = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
g_opt = keras.optimizers.Adam(1e-3)
d_opt = keras.optimizers.Adam(1e-3)
bce = keras.losses.BinaryCrossentropy(from_logits=True)

# Phase 1: warm the generator up on reconstruction alone.
for step in range(3):
    with tf.GradientTape() as tape:
        recon = generator(cond, training=True)
        recon_loss = tf.reduce_mean(tf.square(recon - real))
    grads = tape.gradient(recon_loss, generator.trainable_variables)
    g_opt.apply_gradients(zip(grads, generator.trainable_variables))


@tf.function
def adversarial_step(cond, real):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(cond, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits) + 0.1 * tf.reduce_mean(tf.square(fake - real))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    return g_loss, d_loss


# Phase 2: the adversarial game.
for step in range(3):
    adversarial_step(cond, real)
