"""Clean control 777 (expected clean).

Twin of case 757: the gradient penalty differentiates the critic's scores for
the whole batch of interpolates (the fix the authors confirmed in the issue),
so every sample has a non-zero slope and the critic's gradients are finite.
Setting: GAN (WGAN-GP, character sequences), second-order gradient penalty, custom train_step under fit (tf.function), Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

SEQ_LEN, VOCAB, NOISE, BATCH, LAMBDA = 8, 6, 16, 32, 10.0


def make_generator():
    return keras.Sequential([
        keras.Input((NOISE,)),
        layers.Dense(SEQ_LEN * 32, activation="relu"),
        layers.Reshape((SEQ_LEN, 32)),
        layers.Conv1D(VOCAB, 3, padding="same"),
        layers.Softmax(axis=-1),
    ], name="generator")


def make_discriminator():
    return keras.Sequential([
        keras.Input((SEQ_LEN, VOCAB)),
        layers.Conv1D(32, 3, padding="same", activation="relu"),
        layers.Flatten(),
        layers.Dense(1, use_bias=False),
    ], name="discriminator")


class LanguageWGAN(keras.Model):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer

    def gradient_penalty(self, real_data, fake_data):
        alpha = tf.random.uniform([tf.shape(real_data)[0], 1, 1], 0.0, 1.0)
        differences = fake_data - real_data
        interpolates = real_data + alpha * differences
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolates)
            disc_interpolates = self.discriminator(interpolates, training=True)
        gradients = gp_tape.gradient(disc_interpolates, interpolates)
        slopes = tf.sqrt(tf.reduce_sum(tf.square(gradients), axis=[1, 2]))
        return tf.reduce_mean((slopes - 1.0) ** 2)

    def train_step(self, real_data):
        noise = tf.random.normal([tf.shape(real_data)[0], NOISE])
        with tf.GradientTape() as tape:
            fake_data = self.generator(noise, training=True)
            disc_real = self.discriminator(real_data, training=True)
            disc_fake = self.discriminator(fake_data, training=True)
            disc_cost = tf.reduce_mean(disc_fake) - tf.reduce_mean(disc_real)
            disc_cost += LAMBDA * self.gradient_penalty(real_data, fake_data)
        d_grads = tape.gradient(disc_cost, self.discriminator.trainable_variables)
        self.d_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_variables))

        with tf.GradientTape() as tape:
            gen_cost = -tf.reduce_mean(self.discriminator(self.generator(noise, training=True), training=True))
        g_grads = tape.gradient(gen_cost, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(g_grads, self.generator.trainable_variables))
        return {"disc_cost": disc_cost, "gen_cost": gen_cost}


rng = np.random.default_rng(0)
lines = rng.integers(0, VOCAB, size=(256, SEQ_LEN))
real = np.eye(VOCAB, dtype="float32")[lines]
gan = LanguageWGAN(make_generator(), make_discriminator())
gan.compile(d_optimizer=keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9),
            g_optimizer=keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9))
history = gan.fit(real, batch_size=BATCH, epochs=1, verbose=0)
print({k: v[-1] for k, v in history.history.items()})
