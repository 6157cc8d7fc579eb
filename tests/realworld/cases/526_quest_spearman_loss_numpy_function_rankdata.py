"""Real-world case 526.

Source: https://github.com/tensorflow/tensorflow/issues/35713
Bug: a multi-target text regressor (question/answer quality ratings, scored
by Spearman correlation as in the QUEST Q&A labelling task) is trained on a
Spearman loss. As in the report, the ranks of each target column are computed
with a NumPy rankdata function wrapped in tf.numpy_function, for y_true and
for y_pred alike. tf.numpy_function has no gradient, so the ranks of the
predictions are constants to the tape and every variable of the model gets
None: Keras 3's optimizer raises "No gradients provided for any variable."
Setting: Keras 3 functional model (Embedding, Bidirectional GRU), custom
training loop in a @tf.function train step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB = 200
SEQ_LEN = 24
N_TARGETS = 4
BATCH = 16


def rankdata(values):
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float32)
    ranks[order] = np.arange(1, len(values) + 1, dtype=np.float32)
    return ranks


def spearman_loss(y_true, y_pred):
    rhos = []
    for j in range(N_TARGETS):
        a, b = y_true[:, j], y_pred[:, j]
        rank_a = tf.numpy_function(rankdata, [a], Tout=tf.float32)
        rank_b = tf.numpy_function(rankdata, [b], Tout=tf.float32)
        d2 = tf.reduce_sum(tf.square(rank_a - rank_b))
        rhos.append(1.0 - 6.0 * d2 / (BATCH ** 3 - BATCH))
    return -tf.reduce_mean(tf.stack(rhos))


keras.utils.set_random_seed(0)
tokens = keras.Input(shape=(SEQ_LEN,), dtype="int32", name="qa_tokens")
h = layers.Embedding(VOCAB, 32, mask_zero=True, name="embedding")(tokens)
h = layers.Bidirectional(layers.GRU(16, return_sequences=True), name="bigru")(h)
h = layers.GlobalAveragePooling1D(name="pool")(h)
h = layers.Dense(32, activation="relu", name="hidden")(h)
ratings = layers.Dense(N_TARGETS, activation="sigmoid", name="ratings")(h)
model = keras.Model(tokens, ratings)

rng = np.random.default_rng(0)
x = rng.integers(1, VOCAB, size=(64, SEQ_LEN)).astype("int32")
x[:, 18:] = 0
y = rng.uniform(size=(64, N_TARGETS)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True)

optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(batch_x, batch_y):
    with tf.GradientTape() as tape:
        pred = model(batch_x, training=True)
        loss = spearman_loss(batch_y, pred)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for batch_x, batch_y in dataset.take(2):
    print("loss", float(train_step(batch_x, batch_y)))
