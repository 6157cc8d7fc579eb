"""Real-world control 932 (fixed twin of case 532).

Source: https://github.com/tensorflow/tensorflow/issues/21510
Fix: the hue jitter rotates the chroma plane in YIQ space (tf.image.rgb_to_yiq,
a 2x2 rotation of the I/Q channels, tf.image.yiq_to_rgb), which is built from
differentiable matrix products, instead of round-tripping through
tf.image.hsv_to_rgb, which has no gradient. The generator now gets gradients
through the augmented fakes, as DiffAugment intends.
Setting: Keras 3 subclassed GAN model, custom train_step with two tapes, fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

LATENT_DIM = 16
IMG = 8


def jitter_hue(images, max_delta=0.08):
    yiq = tf.image.rgb_to_yiq(images)
    luma, i_chan, q_chan = tf.unstack(yiq, axis=-1)
    theta = tf.random.uniform([tf.shape(images)[0], 1, 1], -max_delta, max_delta) * 2.0 * np.pi
    cos_t, sin_t = tf.cos(theta), tf.sin(theta)
    i_rot = cos_t * i_chan - sin_t * q_chan
    q_rot = sin_t * i_chan + cos_t * q_chan
    return tf.image.yiq_to_rgb(tf.stack([luma, i_rot, q_rot], axis=-1))


def jitter_brightness(images, max_delta=0.1):
    delta = tf.random.uniform([tf.shape(images)[0], 1, 1, 1], -max_delta, max_delta)
    return tf.clip_by_value(images + delta, 0.0, 1.0)


def diff_augment(images):
    return jitter_hue(jitter_brightness(images))


def make_generator():
    return keras.Sequential([
        keras.Input(shape=(LATENT_DIM,)),
        layers.Dense(4 * 4 * 16, activation="relu", name="g_project"),
        layers.Reshape((4, 4, 16)),
        layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu", name="g_up"),
        layers.Conv2D(3, 3, padding="same", activation="sigmoid", name="g_rgb"),
    ], name="generator")


def make_discriminator():
    return keras.Sequential([
        keras.Input(shape=(IMG, IMG, 3)),
        layers.Conv2D(8, 3, strides=2, padding="same", name="d_conv"),
        layers.LeakyReLU(0.2),
        layers.Flatten(),
        layers.Dense(1, name="d_logit"),
    ], name="discriminator")


class DataEfficientGAN(keras.Model):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.bce = keras.losses.BinaryCrossentropy(from_logits=True)

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer

    def train_step(self, real_images):
        batch = tf.shape(real_images)[0]
        z = tf.random.normal([batch, LATENT_DIM])
        with tf.GradientTape() as d_tape:
            fake = self.generator(z, training=True)
            real_logits = self.discriminator(diff_augment(real_images), training=True)
            fake_logits = self.discriminator(diff_augment(fake), training=True)
            d_loss = (self.bce(tf.ones_like(real_logits), real_logits)
                      + self.bce(tf.zeros_like(fake_logits), fake_logits))
        d_grads = d_tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_weights))

        z = tf.random.normal([batch, LATENT_DIM])
        with tf.GradientTape() as g_tape:
            fake = self.generator(z, training=True)
            fake_logits = self.discriminator(diff_augment(fake), training=True)
            g_loss = self.bce(tf.ones_like(fake_logits), fake_logits)
        g_grads = g_tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(g_grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
real = rng.uniform(0.0, 1.0, size=(64, IMG, IMG, 3)).astype("float32")

gan = DataEfficientGAN(make_generator(), make_discriminator())
gan.compile(d_optimizer=keras.optimizers.Adam(2e-4), g_optimizer=keras.optimizers.Adam(2e-4))
gan.fit(real, batch_size=16, epochs=1, steps_per_epoch=2, verbose=0)
