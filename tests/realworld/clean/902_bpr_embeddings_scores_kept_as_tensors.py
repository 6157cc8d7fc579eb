"""Clean control 902 (look-alike of case 502).

Source: https://github.com/tensorflow/tensorflow/issues/50111
The same BPR recommender loop with the scores passed to the loss as tensors
(no `.numpy()`), so the loss depends on the gathered user/item embeddings and
both tf.Variable tables get (sparse) gradients.
Setting: user/item embedding tables as plain tf.Variables, pairwise BPR loss,
Keras 3 optimizer, eager GradientTape loop.
"""
import keras
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
rng = np.random.default_rng(0)

n_users, n_items, dim = 50, 80, 8
user_emb = tf.Variable(tf.random.normal([n_users, dim], stddev=0.1), name="user_emb")
item_emb = tf.Variable(tf.random.normal([n_items, dim], stddev=0.1), name="item_emb")
params = [user_emb, item_emb]


def bpr_loss(pos_scores, neg_scores):
    return -tf.reduce_mean(tf.math.log_sigmoid(pos_scores - neg_scores))


def sample_triples(batch=64):
    users = rng.integers(0, n_users, batch)
    pos = (users * 7) % n_items
    neg = rng.integers(0, n_items, batch)
    return users, pos, neg


optimizer = keras.optimizers.Adam(learning_rate=0.05)

for step in range(3):
    users, pos, neg = sample_triples()
    with tf.GradientTape() as tape:
        u = tf.gather(user_emb, users)
        pos_scores = tf.reduce_sum(u * tf.gather(item_emb, pos), axis=1)
        neg_scores = tf.reduce_sum(u * tf.gather(item_emb, neg), axis=1)
        loss = bpr_loss(pos_scores, neg_scores)
    grads = tape.gradient(loss, params)
    optimizer.apply_gradients(zip(grads, params))
    print(f"step {step}: bpr loss={float(loss):.4f}")
