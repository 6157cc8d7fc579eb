"""Real-world case 209.

Source: https://github.com/dbpedia/RDF2text-GAN/issues/1
Bug: in adversarial training of an RDF-to-text transformer GAN, the generator's
predicted token distribution is turned into token ids with tf.argmax and then
padded with tf.keras.preprocessing.sequence.pad_sequences before the
discriminator sees it. Both steps cut the generator off: argmax has no
gradient, and pad_sequences returns a NumPy array. The discriminator trains,
the generator's tape returns None for every weight ("No gradients provided").
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
d_seq = keras.Input((seq_len,), dtype="int32")
d_emb = layers.Embedding(vocab_size, 8)
d_feat = layers.Concatenate()([layers.GlobalAveragePooling1D()(d_emb(d_src)),
                               layers.GlobalAveragePooling1D()(d_emb(d_seq))])
discriminator = keras.Model([d_src, d_seq], layers.Dense(1)(d_feat), name="discriminator")

loss_object = keras.losses.BinaryCrossentropy(from_logits=True)
generator_optimizer = keras.optimizers.Adam(1e-4)
discriminator_optimizer = keras.optimizers.Adam(1e-4)


def discriminator_loss(real_output, fake_output):
    return (loss_object(tf.ones_like(real_output), real_output)
            + loss_object(tf.zeros_like(fake_output), fake_output))


def generator_loss(fake_output):
    fake_output = tf.convert_to_tensor(fake_output, dtype=tf.float32)
    return loss_object(tf.ones_like(fake_output, dtype=tf.float32), fake_output)


def train_step(inp, tar):
    tar_inp = tar[:, :-1]
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        predictions = generator([inp, tar_inp], training=True)
        batch_pred = tf.argmax(predictions, axis=-1)
        batch_pred = tf.keras.preprocessing.sequence.pad_sequences(batch_pred, padding="post", value=0,
                                                                   maxlen=tar.shape[-1])
        disc_preds_real = discriminator([inp, tar], training=True)
        disc_preds_fake = discriminator([inp, batch_pred], training=True)
        d_loss = discriminator_loss(disc_preds_real, disc_preds_fake)
        g_loss = generator_loss(disc_preds_fake)
    disc_grads = disc_tape.gradient(d_loss, discriminator.trainable_weights)
    discriminator_optimizer.apply_gradients(zip(disc_grads, discriminator.trainable_weights))
    gen_grads = gen_tape.gradient(g_loss, generator.trainable_weights)
    generator_optimizer.apply_gradients(zip(gen_grads, generator.trainable_weights))


inp = np.random.randint(1, vocab_size, size=(batch_size, seq_len)).astype("int32")
tar = np.random.randint(1, vocab_size, size=(batch_size, seq_len)).astype("int32")
train_step(inp, tar)
