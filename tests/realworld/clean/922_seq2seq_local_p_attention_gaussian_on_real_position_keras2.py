"""Clean control 922 (expected clean).

The local-p attention of case 522 as in Luong et al. (2015): the Gaussian is
centred on the real-valued aligned position p_t, so W_p and v_p are trained
through it. The integer part of p_t is still used, but only to build the hard
window mask [p_t - D, p_t + D], which is a second, non-differentiable factor.
Setting: seq2seq NMT with attention (TF NMT-tutorial style), tf.keras (Keras 2) GRU
encoder-decoder, subclassed Decoder, teacher forcing in an eager GradientTape loop.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.random.set_seed(0)
np.random.seed(0)
VOCAB, EMB, UNITS, SRC_LEN, TGT_LEN, BATCH, WINDOW = 30, 16, 32, 10, 6, 8, 2.0


class LocalAttention(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.W_p = layers.Dense(units, activation="tanh", name="W_p")
        self.v_p = layers.Dense(1, name="v_p")
        self.W_a = layers.Dense(units, use_bias=False, name="W_a")

    def call(self, query, values):
        src_len = values.shape[1]
        p_t = src_len * tf.sigmoid(self.v_p(self.W_p(query)))       # (batch, 1) aligned position
        positions = tf.range(src_len, dtype=tf.float32)[tf.newaxis, :]
        in_window = tf.cast(tf.abs(positions - tf.floor(p_t)) <= WINDOW, tf.float32)
        score = tf.einsum("bsu,bu->bs", values, self.W_a(query))   # Luong "general" score
        align = tf.nn.softmax(score, axis=-1)
        weights = align * in_window * tf.exp(-tf.square(positions - p_t) / (2.0 * (WINDOW / 2.0) ** 2))
        context = tf.reduce_sum(weights[:, :, tf.newaxis] * values, axis=1)
        return context, weights


class Decoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embedding = layers.Embedding(VOCAB, EMB)
        self.gru = layers.GRU(UNITS, return_state=True)
        self.attention = LocalAttention(UNITS)
        self.fc = layers.Dense(VOCAB)

    def call(self, x, hidden, enc_output):
        output, state = self.gru(self.embedding(x), initial_state=hidden)
        context, _ = self.attention(state, enc_output)
        return self.fc(tf.concat([context, output], axis=-1)), state


src_tokens = layers.Input((SRC_LEN,))
enc_seq, enc_state = layers.GRU(UNITS, return_sequences=True, return_state=True)(
    layers.Embedding(VOCAB, EMB)(src_tokens))
encoder, decoder = tf.keras.Model(src_tokens, [enc_seq, enc_state], name="encoder"), Decoder()
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
src = tf.constant(np.random.randint(1, VOCAB, (BATCH, SRC_LEN)))
tgt = tf.constant(np.random.randint(1, VOCAB, (BATCH, TGT_LEN)))

with tf.GradientTape() as tape:
    enc_output, dec_hidden = encoder(src)
    loss = 0.0
    for t in range(1, TGT_LEN):                      # teacher forcing
        logits, dec_hidden = decoder(tgt[:, t - 1:t], dec_hidden, enc_output)
        loss += loss_object(tgt[:, t], logits)
variables = encoder.trainable_variables + decoder.trainable_variables
gradients = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(gradients, variables))
print("batch loss:", float(loss) / (TGT_LEN - 1))
print("None gradients:", sum(g is None for g in gradients))
