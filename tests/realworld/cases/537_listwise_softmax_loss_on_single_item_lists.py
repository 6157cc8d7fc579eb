"""Real-world case 537.

Source: https://github.com/tensorflow/ranking/issues/207
Bug: a learning-to-rank scorer trained with a listwise (ListNet-style)
softmax cross-entropy. The query/document pairs were exported one document
per row, so every batch reaches the loss as scores of shape (batch, 1): each
"list" holds a single document. A softmax over one item is exactly 1, so
log_softmax is exactly 0 and its gradient 1 - softmax is exactly 0 (as the
TF-Ranking maintainers answered: listwise and pairwise losses need lists of
two or more documents). The loss prints 0.0000 every step and every weight
of the scorer gets an all-zero gradient; nothing is reported.
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
        keras.Input(shape=(N_FEATURES,)),
        layers.Dense(32, activation="relu", name="score_hidden_1"),
        layers.Dense(16, activation="relu", name="score_hidden_2"),
        layers.Dense(1, use_bias=False, name="score"),  # softmax is shift-invariant
    ],
    name="doc_scorer",
)
optimizer = keras.optimizers.Adam(1e-3)

# one row per (query, document) pair, as exported from the click logs
dataset = (
    tf.data.Dataset.from_tensor_slices((doc_features, relevance[:, None]))
    .shuffle(512, seed=0)
    .batch(LIST_SIZE * 8)
)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        scores = scorer(x, training=True)
        loss = listwise_softmax_loss(y, scores)
    grads = tape.gradient(loss, scorer.trainable_variables)
    optimizer.apply_gradients(zip(grads, scorer.trainable_variables))
    return loss


for step, (x, y) in enumerate(dataset.take(4)):
    loss = train_step(x, y)
    print(f"step {step}: listwise loss {float(loss):.4f}")
