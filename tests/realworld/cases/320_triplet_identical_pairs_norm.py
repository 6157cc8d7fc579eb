"""Real-world case 320.

Source: https://github.com/tensorflow/tensorflow/issues/30199
Bug: "Gradient returns 'Nan' values when using triplet loss with similar batches": with a
small vocabulary and short sequences, the batch generator sometimes draws a positive that is
identical to its anchor; the Euclidean distance between their embeddings is exactly 0, the
derivative of its square root is infinite there, and the whole gradient becomes NaN while
the loss is finite.
Setting: Keras 3 sequence encoder (Embedding, GlobalAveragePooling1D, Dense), triplet loss
with tf.norm, tf.function custom train step.
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
        pos_dist = tf.norm(a - p, axis=-1)
        neg_dist = tf.norm(a - n, axis=-1)
        loss = tf.reduce_mean(tf.maximum(pos_dist - neg_dist + margin, 0.0))
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
    return loss


for step in range(3):
    train_step(*triplet_batch())
