"""Real-world control 924 (fixed twin of case 524).

Source: https://github.com/abisee/pointer-generator/issues/89
Fix: the embedding-distance loss compares the target word's embedding with
the *expected* embedding of the prediction, softmax(logits) @ table, instead
of the embedding of the argmax word, so the loss stays differentiable with
respect to the logits and every layer of the seq2seq model trains.
Setting: Keras 3 subclassed Model, teacher-forced decoder, loss helper with
keras.ops, custom train_step under model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

VOCAB = 24
SRC_LEN = 7
TGT_LEN = 6
EMB = 16
UNITS = 32
GO = 0


def embedding_distance(table, target_ids, logits):
    predicted_probs = ops.softmax(logits, axis=-1)
    predicted_vec = ops.matmul(predicted_probs, table)
    target_vec = ops.take(table, target_ids, axis=0)
    return ops.mean(ops.sum(ops.square(predicted_vec - target_vec), axis=-1))


class Seq2Seq(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embed = layers.Embedding(VOCAB, EMB, name="shared_embed")
        self.encoder = layers.GRU(UNITS, return_state=True, name="encoder")
        self.decoder = layers.GRU(UNITS, return_sequences=True, name="decoder")
        self.proj = layers.Dense(VOCAB, name="proj")

    def call(self, inputs, training=False):
        src, dec_in = inputs
        _, state = self.encoder(self.embed(src), training=training)
        dec = self.decoder(self.embed(dec_in), initial_state=state, training=training)
        return self.proj(dec)

    def train_step(self, data):
        (src, dec_in), tgt = data
        with tf.GradientTape() as tape:
            logits = self((src, dec_in), training=True)
            loss = embedding_distance(self.embed.embeddings, tgt, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
src = rng.integers(1, VOCAB, size=(96, SRC_LEN)).astype("int32")
tgt = src[:, ::-1][:, :TGT_LEN].copy()
dec_in = np.concatenate([np.full((96, 1), GO, "int32"), tgt[:, :-1]], axis=1)

model = Seq2Seq()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit((src, dec_in), tgt, batch_size=32, epochs=1, verbose=0)
