"""Clean control 948 (expected clean).

Look-alike of case 548: the sequence triplet encoder whose Euclidean
distance floors the squared distance before the square root, so an
anchor/positive pair that is identical gives distance ~0 with a finite
gradient.
Setting: keras.Model subclass overriding compute_loss, model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
VOCAB, SEQ_LEN, EMB_DIM = 4, 8, 32


def euclidean(a, b):
    return tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(a - b), axis=-1), 1e-12))


class TripletEncoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(VOCAB, 16)
        self.gru = layers.GRU(32)
        self.proj = layers.Dense(EMB_DIM, use_bias=False)

    def encode(self, seq):
        return self.proj(self.gru(self.embed(seq)))

    def call(self, inputs):
        anchor, positive, negative = inputs
        return tf.stack([self.encode(anchor), self.encode(positive), self.encode(negative)], axis=1)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        ea, ep, en = y_pred[:, 0], y_pred[:, 1], y_pred[:, 2]
        d_ap = euclidean(ea, ep)
        d_an = euclidean(ea, en)
        return tf.reduce_mean(tf.math.softplus(d_ap - d_an))


def make_triplets(n, rng):
    anchors = rng.integers(0, VOCAB, size=(n, SEQ_LEN))
    positives = anchors.copy()
    pos = rng.integers(0, SEQ_LEN, size=n)
    positives[np.arange(n), pos] = rng.integers(0, VOCAB, size=n)
    negatives = rng.integers(0, VOCAB, size=(n, SEQ_LEN))
    return anchors.astype("int32"), positives.astype("int32"), negatives.astype("int32")


rng = np.random.default_rng(0)
anchors, positives, negatives = make_triplets(256, rng)
model = TripletEncoder()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
history = model.fit((anchors, positives, negatives), batch_size=64, epochs=4, verbose=0)
print("loss:", history.history["loss"])
