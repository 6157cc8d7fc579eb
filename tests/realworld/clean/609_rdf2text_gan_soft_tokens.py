"""Clean control 609 (expected clean).

The text GAN step of case 209 with a differentiable hand-off: the generated
sequence reaches the discriminator as softmax rows padded with tf.pad, the
real target as one-hot rows, and a Dense layer plays the discriminator's
embedding; tf.argmax is kept only to decode a sample for logging.
Setting: GAN (seq2seq generator, token discriminator), Keras 3, eager train step.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

np.random.seed(0)
tf.random.set_seed(0)
vocab_size, seq_len, batch_size = 30, 6, 4

src = keras.Input((seq_len,), dtype="int32")
tgt = keras.Input((seq_len - 1,), dtype="int32")
memory = layers.GlobalAveragePooling1D()(layers.Embedding(vocab_size, 8)(src))
dec = layers.Embedding(vocab_size, 8)(tgt) + layers.RepeatVector(seq_len - 1)(memory)
generator = keras.Model([src, tgt], layers.Dense(vocab_size)(layers.Dense(16, activation="relu")(dec)),
                        name="generator")

d_src = keras.Input((seq_len,), dtype="int32")
d_seq = keras.Input((seq_len, vocab_size))
d_feat = layers.Concatenate()([layers.GlobalAveragePooling1D()(layers.Embedding(vocab_size, 8)(d_src)),
                               layers.GlobalAveragePooling1D()(layers.Dense(8, use_bias=False)(d_seq))])
discriminator = keras.Model([d_src, d_seq], layers.Dense(1)(d_feat), name="discriminator")

loss_object = keras.losses.BinaryCrossentropy(from_logits=True)
generator_optimizer = keras.optimizers.Adam(1e-4)
discriminator_optimizer = keras.optimizers.Adam(1e-4)


def discriminator_loss(real_output, fake_output):
    return (loss_object(tf.ones_like(real_output), real_output)
            + loss_object(tf.zeros_like(fake_output), fake_output))


def generator_loss(fake_output):
    return loss_object(tf.ones_like(fake_output, dtype=tf.float32), fake_output)


def train_step(inp, tar):
    tar_inp = tar[:, :-1]
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        predictions = generator([inp, tar_inp], training=True)
        soft_tokens = tf.pad(tf.nn.softmax(predictions), [[0, 0], [0, 1], [0, 0]])
        disc_preds_real = discriminator([inp, tf.one_hot(tar, vocab_size)], training=True)
        disc_preds_fake = discriminator([inp, soft_tokens], training=True)
        d_loss = discriminator_loss(disc_preds_real, disc_preds_fake)
        g_loss = generator_loss(disc_preds_fake)
    disc_grads = disc_tape.gradient(d_loss, discriminator.trainable_weights)
    discriminator_optimizer.apply_gradients(zip(disc_grads, discriminator.trainable_weights))
    gen_grads = gen_tape.gradient(g_loss, generator.trainable_weights)
    generator_optimizer.apply_gradients(zip(gen_grads, generator.trainable_weights))
    print("sample:", tf.argmax(predictions, axis=-1)[0].numpy(), "g_loss:", float(g_loss))


inp = tf.constant(np.random.randint(1, vocab_size, size=(batch_size, seq_len)), dtype=tf.int32)
tar = tf.constant(np.random.randint(1, vocab_size, size=(batch_size, seq_len)), dtype=tf.int32)
train_step(inp, tar)
