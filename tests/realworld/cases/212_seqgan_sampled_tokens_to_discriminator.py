"""Real-world case 212.

Source: https://github.com/LantaoYu/SeqGAN/issues/31
Bug: a sequence GAN samples the generator's tokens with tf.random.categorical
(tf.multinomial in the original) and scores the sampled token ids with the
discriminator; the generator loss is then differentiated straight through the
sampling step, which has no gradient, so the generator gets None everywhere
(SeqGAN trains the generator with a policy gradient instead).
Setting: GAN (token sequences), Keras 3, model.fit with a custom train_step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

vocab_size, seq_len, latent_dim = 12, 6, 8
np.random.seed(0)
tf.random.set_seed(0)

generator = keras.Sequential([keras.Input((latent_dim,)), layers.Dense(32, activation="relu"),
                              layers.Dense(seq_len * vocab_size), layers.Reshape((seq_len, vocab_size))],
                             name="generator")
discriminator = keras.Sequential([keras.Input((seq_len,), dtype="int32"), layers.Embedding(vocab_size, 8),
                                  layers.GlobalAveragePooling1D(), layers.Dense(1)], name="discriminator")


class SeqGAN(keras.Model):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    def sample(self, logits):
        return tf.random.categorical(tf.reshape(logits, [-1, vocab_size]), 1)

    def train_step(self, real_tokens):
        batch_size = tf.shape(real_tokens)[0]
        noise = tf.random.normal((batch_size, latent_dim))
        fake_tokens = tf.reshape(self.sample(self.generator(noise)), [-1, seq_len])
        with tf.GradientTape() as tape:
            real_pred = self.discriminator(real_tokens, training=True)
            fake_pred = self.discriminator(fake_tokens, training=True)
            d_loss = (self.loss_fn(tf.ones_like(real_pred), real_pred)
                      + self.loss_fn(tf.zeros_like(fake_pred), fake_pred))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        with tf.GradientTape() as tape:
            logits = self.generator(noise, training=True)
            samples = tf.random.categorical(tf.reshape(logits, [-1, vocab_size]), 1)
            predictions = self.discriminator(tf.reshape(samples, [-1, seq_len]), training=True)
            g_loss = self.loss_fn(tf.ones_like(predictions), predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


real_tokens = np.random.randint(0, vocab_size, size=(32, seq_len)).astype("int32")
gan = SeqGAN(generator, discriminator)
gan.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3),
            keras.losses.BinaryCrossentropy(from_logits=True))
gan.fit(tf.data.Dataset.from_tensor_slices(real_tokens).batch(8), epochs=1, verbose=0)
