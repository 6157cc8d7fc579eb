"""Real-world case 270.

Source: https://github.com/xuxingya/tf2crf/issues/15
Bug: a BiLSTM tagger ends in a CRF layer whose `transitions` matrix is only
used by the Viterbi decode (tf.scan + argmax back-pointers, as
tfa.text.crf_decode does); the custom train_step scores the unary potentials
with plain cross-entropy instead of the CRF log-likelihood, so no path from
the loss reaches `transitions` and Keras warns "Gradients do not exist".
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
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, potentials, from_logits=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "tag_acc": tf.reduce_mean(tf.cast(tf.equal(viterbi, y), tf.float32))}


x = np.random.randint(0, VOCAB, size=(32, T))
y = (x % TAGS).astype("int32")
model = Tagger()
model.compile(optimizer=keras.optimizers.Adam(1e-2))
model.fit(x, y, batch_size=16, epochs=2, verbose=2)
