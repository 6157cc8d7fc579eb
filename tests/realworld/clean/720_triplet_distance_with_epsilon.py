"""Clean control 720 (look-alike of case 320).

Source: https://github.com/tensorflow/tensorflow/issues/30199
The same triplet training with identical pairs in the batch, the distance computed with an
epsilon inside the square root: finite gradients at distance 0.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
encoder = keras.Sequential(
    [
        keras.Input((12,), dtype="int32"),
        keras.layers.Embedding(20, 16),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(8),
    ]
)
optimizer = keras.optimizers.Adam(1e-3)


def triplet_batch(n=32):
    anchors = np.random.randint(0, 20, size=(n, 12))
    positives = anchors.copy()
    mutate = np.random.rand(n) < 0.75  # the other quarter: the positive is the anchor itself
    positives[mutate, np.random.randint(0, 12, size=mutate.sum())] = np.random.randint(0, 20, size=mutate.sum())
    negatives = np.random.randint(0, 20, size=(n, 12))
    return anchors, positives, negatives


@tf.function
def train_step(anchors, positives, negatives, margin=1.0):
    with tf.GradientTape() as tape:
        a, p, n = encoder(anchors), encoder(positives), encoder(negatives)
        pos_dist = tf.sqrt(tf.reduce_sum(tf.square(a - p), axis=-1) + 1e-12)
        neg_dist = tf.sqrt(tf.reduce_sum(tf.square(a - n), axis=-1) + 1e-12)
        loss = tf.reduce_mean(tf.maximum(pos_dist - neg_dist + margin, 0.0))
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
    return loss


for step in range(3):
    train_step(*triplet_batch())
