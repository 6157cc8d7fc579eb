"""A DCGAN on synthetic 64x64 images (the TensorFlow tutorial's shape: a custom loop with
two tapes, one per network). ``--graph``: the step in a ``tf.function``.

    python dcgan.py [--graph] [--batch 64]
"""

import argparse

import keras
import numpy as np
import tensorflow as tf
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--graph", action="store_true")
parser.add_argument("--batch", type=int, default=64)
args = parser.parse_args()
LATENT, SIDE = 100, 64

generator = keras.Sequential(
    [
        keras.Input((LATENT,)),
        layers.Dense(8 * 8 * 256, use_bias=False),
        layers.BatchNormalization(),
        layers.LeakyReLU(),
        layers.Reshape((8, 8, 256)),
        layers.Conv2DTranspose(128, 5, strides=2, padding="same", use_bias=False),
        layers.BatchNormalization(),
        layers.LeakyReLU(),
        layers.Conv2DTranspose(64, 5, strides=2, padding="same", use_bias=False),
        layers.BatchNormalization(),
        layers.LeakyReLU(),
        layers.Conv2DTranspose(3, 5, strides=2, padding="same", activation="tanh"),
    ]
)
discriminator = keras.Sequential(
    [
        keras.Input((SIDE, SIDE, 3)),
        layers.Conv2D(64, 5, strides=2, padding="same"),
        layers.LeakyReLU(),
        layers.Dropout(0.3),
        layers.Conv2D(128, 5, strides=2, padding="same"),
        layers.LeakyReLU(),
        layers.Dropout(0.3),
        layers.Flatten(),
        layers.Dense(1),
    ]
)
bce = keras.losses.BinaryCrossentropy(from_logits=True)
g_opt, d_opt = keras.optimizers.Adam(1e-4), keras.optimizers.Adam(1e-4)


def train_step(images):
    noise = tf.random.normal([args.batch, LATENT])
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_out = discriminator(images, training=True)
        fake_out = discriminator(fake, training=True)
        g_loss = bce(tf.ones_like(fake_out), fake_out)
        d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables, strict=True))
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables, strict=True))
    return g_loss, d_loss


step = tf.function(train_step) if args.graph else train_step
data = np.random.default_rng(0).uniform(-1, 1, size=(args.batch * 4, SIDE, SIDE, 3)).astype("float32")
for _epoch in range(2):
    for start in range(0, len(data), args.batch):
        step(data[start : start + args.batch])
