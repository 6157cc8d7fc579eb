"""Real-world case 587.

Source: https://github.com/huggingface/sentence-transformers/pull/4033
Bug: the triplet loss measures the Euclidean distance as
sqrt(sum(square(anchor - positive))). Duplicated sentences in the training
pairs make anchor and positive identical, the distance is exactly 0 and the
derivative of sqrt at 0 is infinite: 0 * inf gives NaN gradients for every
encoder weight although the loss itself is finite (the hinge is even
inactive for those triplets). The first update writes NaN into the model.
Setting: subclassed Keras sentence encoder, eager custom training loop with
tf.GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class SentenceEncoder(keras.Model):
    def __init__(self, vocab_size=500, dim=32, **kwargs):
        super().__init__(**kwargs)
        self.embed = layers.Embedding(vocab_size, dim, mask_zero=True)
        self.pool = layers.GlobalAveragePooling1D()
        self.dense = layers.Dense(dim, activation="tanh")

    def call(self, token_ids):
        x = self.embed(token_ids)
        x = self.pool(x, mask=self.embed.compute_mask(token_ids))
        return self.dense(x)


def euclidean_distance(a, b):
    return tf.sqrt(tf.reduce_sum(tf.square(a - b), axis=-1))


def triplet_loss(anchor, positive, negative, margin=1.0):
    d_ap = euclidean_distance(anchor, positive)
    d_an = euclidean_distance(anchor, negative)
    return tf.reduce_mean(tf.nn.relu(d_ap - d_an + margin))


rng = np.random.default_rng(0)
n, seq_len = 256, 12
anchors = rng.integers(1, 500, size=(n, seq_len))
positives = np.where(rng.random((n, seq_len)) < 0.2, rng.integers(1, 500, size=(n, seq_len)), anchors)
duplicates = rng.random(n) < 0.1          # paraphrase pairs mined from the corpus: some are exact duplicates
positives[duplicates] = anchors[duplicates]
negatives = rng.integers(1, 500, size=(n, seq_len))
dataset = tf.data.Dataset.from_tensor_slices((anchors, positives, negatives)).batch(64)

model = SentenceEncoder()
optimizer = keras.optimizers.Adam(1e-3)

for epoch in range(2):
    for a_ids, p_ids, n_ids in dataset:
        with tf.GradientTape() as tape:
            loss = triplet_loss(model(a_ids), model(p_ids), model(n_ids))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("epoch", epoch, "loss", float(loss))
