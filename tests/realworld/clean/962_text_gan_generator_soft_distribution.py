"""Clean twin of case 562.

Source: https://github.com/keras-team/keras/issues/17444
Fix: feed the discriminator the generator's softmax distribution instead of
argmax token ids (real sentences as one-hot vectors, a Dense layer as the
embedding), so the adversarial loss is differentiable w.r.t. the generator.
Setting: GAN on discrete tokens, eager custom GradientTape loop, two models.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

total_words, seq_len, noise_dim, batch_size = 50, 10, 16, 32

generator = keras.Sequential(
    [
        keras.Input(shape=(seq_len, noise_dim)),
        layers.LSTM(64, return_sequences=True),
        layers.Dense(total_words, activation="softmax"),
    ],
    name="generator",
)
discriminator = keras.Sequential(
    [
        keras.Input(shape=(seq_len, total_words)),
        layers.Dense(32, use_bias=False),
        layers.LSTM(32),
        layers.Dense(1),
    ],
    name="discriminator",
)
bce = keras.losses.BinaryCrossentropy(from_logits=True)
g_optimizer = keras.optimizers.Adam(1e-3)
d_optimizer = keras.optimizers.Adam(1e-3)

rng = np.random.default_rng(0)
real_sequences = rng.integers(1, total_words, size=(128, seq_len)).astype("int32")
real_train_dataset = tf.data.Dataset.from_tensor_slices(real_sequences).batch(batch_size)


def train_step(real_batch):
    noise = tf.random.normal((tf.shape(real_batch)[0], seq_len, noise_dim))
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        word_probs = generator(noise, training=True)
        fake_batch = word_probs
        real_logits = discriminator(tf.one_hot(real_batch, total_words), training=True)
        fake_logits = discriminator(fake_batch, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    none = [v.path for g, v in zip(g_grads, generator.trainable_variables) if g is None]
    if none:
        print("None gradients for:", none)
        return d_loss, g_loss
    g_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


for epoch in range(2):
    for real_batch in real_train_dataset:
        d_loss, g_loss = train_step(real_batch)
    print("epoch", epoch, "d_loss", float(d_loss), "g_loss", float(g_loss))
