"""Real-world control 937 (fixed twin of case 537).

Source: https://github.com/tensorflow/ranking/issues/207
Fix: the per-document rows are grouped back into one list per query
(features (queries, LIST_SIZE, N_FEATURES), labels (queries, LIST_SIZE)) and
the scorer's last axis is squeezed, so the listwise softmax runs over the 8
documents of each query and the loss has a real gradient.
Setting: Keras 3 Sequential scorer, custom keras.ops loss, tf.data pipeline,
@tf.function training step with tf.GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

N_QUERIES = 64
LIST_SIZE = 8
N_FEATURES = 12

rng = np.random.default_rng(0)
doc_features = rng.normal(size=(N_QUERIES * LIST_SIZE, N_FEATURES)).astype("float32")
true_w = rng.normal(size=(N_FEATURES,)).astype("float32")
relevance = np.clip(np.round(doc_features @ true_w / 2.0 + 2.0), 0, 4).astype("float32")


def listwise_softmax_loss(labels, scores):
    """ListNet: cross-entropy between label and score distributions of each list."""
    labels = ops.cast(labels, "float32")
    label_dist = labels / (ops.sum(labels, axis=-1, keepdims=True) + 1e-9)
    log_p = ops.log_softmax(scores, axis=-1)
    return -ops.mean(ops.sum(label_dist * log_p, axis=-1))


keras.utils.set_random_seed(0)
scorer = keras.Sequential(
    [
        keras.Input(shape=(LIST_SIZE, N_FEATURES)),
        layers.Dense(32, activation="relu", name="score_hidden_1"),
        layers.Dense(16, activation="relu", name="score_hidden_2"),
        layers.Dense(1, use_bias=False, name="score"),  # softmax is shift-invariant
    ],
    name="doc_scorer",
)
optimizer = keras.optimizers.Adam(1e-3)

# group the (query, document) rows back into one list per query
query_lists = doc_features.reshape(N_QUERIES, LIST_SIZE, N_FEATURES)
query_labels = relevance.reshape(N_QUERIES, LIST_SIZE)
dataset = (
    tf.data.Dataset.from_tensor_slices((query_lists, query_labels))
    .shuffle(64, seed=0)
    .batch(8)
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        scores = ops.squeeze(scorer(x, training=True), axis=-1)
        loss = listwise_softmax_loss(y, scores)
    grads = tape.gradient(loss, scorer.trainable_variables)
    optimizer.apply_gradients(zip(grads, scorer.trainable_variables))
    return loss


for step, (x, y) in enumerate(dataset.take(4)):
    loss = train_step(x, y)
    print(f"step {step}: listwise loss {float(loss):.4f}")
