"""Real-world case 518.

Source: https://exchangetuts.com/possible-to-use-rank-correlation-as-cost-function-in-tensorflow-1641466443828946
Bug: "Possible to use Rank Correlation as cost function in TensorFlow?" (asker: "Will TensorFlow
not have a gradient error/be unable to track how a change in a weight/bias affects the cost?").
The answer ranks the predictions with tf.nn.top_k(predictions, k=samples).indices and builds the
Spearman coefficient from those ranks; indices are integers with no gradient, so the loss is cut
from the network (the numer.ai forum says the same of its argsort version: "isn't differentiable,
which makes it rather useless if you want to use it in a loss function").
Here a Numerai-style per-era Spearman loss is computed in a tf.map_fn body for a two-layer
network held in raw tf.Variable weights: every weight's gradient is None.
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


def era_spearman(era):
    preds, target = era
    pred_rank, true_rank = ranks(preds), ranks(target)
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
