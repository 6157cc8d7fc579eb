"""Clean control 670 (look-alike of case 270).

Source: https://github.com/xuxingya/tf2crf/issues/15
Fix: the train_step minimises the CRF negative log-likelihood (forward
algorithm over the same `transitions` with tf.scan + logsumexp), so the loss
reaches every variable, `transitions` included; Viterbi stays for accuracy.
Setting: sequence tagging, Keras 3, model.fit with a custom train_step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
VOCAB, TAGS, T = 30, 5, 7


class CRF(layers.Layer):
    def build(self, input_shape):
        n = input_shape[-1]
        self.transitions = self.add_weight(shape=(n, n), initializer="orthogonal", name="transitions")

    def call(self, potentials):
        def forward(state, unary):
            cand = tf.expand_dims(state[0], 2) + self.transitions
            return tf.reduce_max(cand, 1) + unary, tf.argmax(cand, 1, output_type=tf.int32)
        first = potentials[:, 0]
        scores, backptrs = tf.scan(forward, tf.transpose(potentials[:, 1:], [1, 0, 2]),
                                   initializer=(first, tf.zeros_like(first, tf.int32)))
        last = tf.argmax(scores[-1], -1, output_type=tf.int32)
        tags = tf.scan(lambda tag, bp: tf.gather(bp, tag, batch_dims=1), backptrs,
                       initializer=last, reverse=True)
        return tf.concat([tf.transpose(tags), last[:, None]], 1), potentials

    def nll(self, potentials, y):
        gold = tf.reduce_sum(tf.gather(potentials, y, batch_dims=2), 1)
        gold += tf.reduce_sum(tf.gather_nd(self.transitions, tf.stack([y[:, :-1], y[:, 1:]], -1)), 1)
        alphas = tf.scan(lambda a, u: tf.reduce_logsumexp(a[:, :, None] + self.transitions, 1) + u,
                         tf.transpose(potentials[:, 1:], [1, 0, 2]), initializer=potentials[:, 0])
        return tf.reduce_mean(tf.reduce_logsumexp(alphas[-1], -1) - gold)


class Tagger(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(VOCAB, 16)
        self.bilstm = layers.Bidirectional(layers.LSTM(8, return_sequences=True))
        self.dense = layers.Dense(TAGS)
        self.crf = CRF(name="crf")

    def call(self, x):
        return self.crf(self.dense(self.bilstm(self.embed(x))))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            viterbi, potentials = self(x, training=True)
            loss = self.crf.nll(potentials, y)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "tag_acc": tf.reduce_mean(tf.cast(tf.equal(viterbi, y), tf.float32))}


x = np.random.randint(0, VOCAB, size=(32, T))
y = (x % TAGS).astype("int32")
model = Tagger()
model.compile(optimizer=keras.optimizers.Adam(1e-2))
model.fit(x, y, batch_size=16, epochs=2, verbose=2)
