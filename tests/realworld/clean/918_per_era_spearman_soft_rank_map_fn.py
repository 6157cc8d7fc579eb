"""Clean control 918 (expected clean).

The per-era Spearman loss of case 518 with the predictions ranked by a soft rank (rank_i = sum_j
sigmoid((p_j - p_i) / temperature), the usual differentiable relaxation, as the fast-soft-sort
answers suggest) instead of tf.nn.top_k indices; the targets, which carry no gradient, are still
ranked exactly with top_k. Every weight gets a finite, non-zero gradient.
Setting: low-level TF (raw tf.Variable weights, tf.map_fn bodies, eager GradientTape).
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
n_eras, per_era, n_feat = 4, 32, 10
features = rng.normal(size=(n_eras, per_era, n_feat)).astype("float32")
targets = (features @ rng.normal(size=n_feat) + rng.normal(size=(n_eras, per_era))).astype("float32")

w_hidden = tf.Variable(rng.normal(0.0, 0.3, (n_feat, 16)).astype("float32"), name="w_hidden")
b_hidden = tf.Variable(tf.zeros([16]), name="b_hidden")
w_out = tf.Variable(rng.normal(0.0, 0.3, (16, 1)).astype("float32"), name="w_out")
params = [w_hidden, b_hidden, w_out]


def predict(x):
    return tf.squeeze(tf.matmul(tf.nn.relu(tf.matmul(x, w_hidden) + b_hidden), w_out), -1)


def ranks(values):
    order = tf.nn.top_k(values, k=tf.shape(values)[0]).indices
    return tf.cast(tf.math.invert_permutation(order), tf.float32)


def soft_ranks(values, temperature=0.1):
    diffs = values[None, :] - values[:, None]
    return tf.reduce_sum(tf.sigmoid(diffs / temperature), axis=1) - 0.5


def era_spearman(era):
    preds, target = era
    pred_rank, true_rank = soft_ranks(preds), ranks(target)
    pc, tc = pred_rank - tf.reduce_mean(pred_rank), true_rank - tf.reduce_mean(true_rank)
    return tf.reduce_sum(pc * tc) / (tf.norm(pc) * tf.norm(tc))


with tf.GradientTape() as tape:
    preds = tf.map_fn(predict, features)
    corrs = tf.map_fn(era_spearman, (preds, targets), fn_output_signature=tf.float32)
    loss = -tf.reduce_mean(corrs)
grads = tape.gradient(loss, params)
print("per-era spearman:", corrs.numpy())
for var, grad in zip(params, grads):
    print(var.name, "gradient:", None if grad is None else float(tf.norm(grad)))
