"""A WGAN-GP on synthetic 64x64 images: conv critic and generator, a gradient penalty
computed with a nested tape (second-order), ``d_steps`` critic updates per generator
update, as in the keras-io example. ``--eager``: a custom eager loop instead of ``fit``.

    python wgan_gp.py [--eager] [--batch 64]
"""

import argparse

import keras
import numpy as np
import tensorflow as tf
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--eager", action="store_true")
parser.add_argument("--batch", type=int, default=64)
args = parser.parse_args()
LATENT, SIDE = 128, 64


def critic():
    return keras.Sequential(
        [
            keras.Input((SIDE, SIDE, 3)),
            layers.Conv2D(64, 4, strides=2, padding="same"),
            layers.LeakyReLU(0.2),
            layers.Conv2D(128, 4, strides=2, padding="same"),
            layers.LeakyReLU(0.2),
            layers.Conv2D(256, 4, strides=2, padding="same"),
            layers.LeakyReLU(0.2),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )


def generator():
    return keras.Sequential(
        [
            keras.Input((LATENT,)),
            layers.Dense(8 * 8 * 256),
            layers.Reshape((8, 8, 256)),
            layers.Conv2DTranspose(128, 4, strides=2, padding="same"),
            layers.BatchNormalization(),
            layers.LeakyReLU(0.2),
            layers.Conv2DTranspose(64, 4, strides=2, padding="same"),
            layers.BatchNormalization(),
            layers.LeakyReLU(0.2),
            layers.Conv2DTranspose(3, 4, strides=2, padding="same", activation="tanh"),
        ]
    )


class WGAN(keras.Model):
    def __init__(self, d_steps=3, gp_weight=10.0):
        super().__init__()
        self.critic, self.generator = critic(), generator()
        self.d_steps, self.gp_weight = d_steps, gp_weight

    def compile(self, d_optimizer, g_optimizer, **kwargs):
        super().compile(**kwargs)
        self.d_optimizer, self.g_optimizer = d_optimizer, g_optimizer

    def gradient_penalty(self, real, fake):
        alpha = tf.random.uniform([tf.shape(real)[0], 1, 1, 1])
        mixed = real + alpha * (fake - real)
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(mixed)
            score = self.critic(mixed, training=True)
        grads = gp_tape.gradient(score, [mixed])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real):
        batch = tf.shape(real)[0]
        for _ in range(self.d_steps):
            noise = tf.random.normal([batch, LATENT])
            with tf.GradientTape() as tape:
                fake = self.generator(noise, training=True)
                d_loss = tf.reduce_mean(self.critic(fake, training=True)) - tf.reduce_mean(
                    self.critic(real, training=True)
                )
                d_loss += self.gp_weight * self.gradient_penalty(real, fake)
            grads = tape.gradient(d_loss, self.critic.trainable_variables)
            self.d_optimizer.apply_gradients(zip(grads, self.critic.trainable_variables, strict=True))
        noise = tf.random.normal([batch, LATENT])
        with tf.GradientTape() as tape:
            g_loss = -tf.reduce_mean(self.critic(self.generator(noise, training=True), training=True))
        grads = tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_variables, strict=True))
        return {"d_loss": d_loss, "g_loss": g_loss}


images = np.random.default_rng(0).uniform(-1, 1, size=(args.batch * 2, SIDE, SIDE, 3)).astype("float32")
model = WGAN()
model.compile(
    d_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5),
    g_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5),
    run_eagerly=args.eager,
)
model.fit(images, batch_size=args.batch, epochs=1, verbose=0)
