"""Real-world case 494.

Source: https://github.com/tensorflow/tensorflow/issues/30199
Bug: a triplet-loss train step computes the anchor-positive Euclidean distance as
tf.sqrt(tf.reduce_sum(tf.square(a - p), axis=1)). As in the report ("generating positives
that are similar to my anchor ... causes the whole gradient to become NaN"), some positives
are the very same sample as their anchor, so their distance is exactly 0 and the gradient of
sqrt there is 0.5 / 0 = inf; inf * 0 = NaN flows into every weight of the shared embedding
network (the soft-margin loss of the batch-hard paper the report follows never has a zero
slope, so these rows always pass a gradient). The first step's loss is finite, the next is
NaN. The op is inside the @tf.function train step; the step is called from plain Python.
Setting: Keras 3 Sequential embedding network, @tf.function train step with a raw
GradientTape and a Keras optimizer.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)  # seeds Python, NumPy and TensorFlow
B, D = 32, 10

embed = keras.Sequential(
    [keras.Input((D,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(8)],
    name="embed",
)
optimizer = keras.optimizers.Adam(1e-3)

anchors = np.random.randn(B, D).astype("float32")
positives = anchors + 0.1 * np.random.randn(B, D).astype("float32")
positives[:4] = anchors[:4]  # duplicate sequences: the positive is the anchor itself
negatives = np.random.randn(B, D).astype("float32")


@tf.function
def train_step(a, p, n):
    with tf.GradientTape() as tape:
        ea, ep, en = embed(a), embed(p), embed(n)
        pos_dist = tf.sqrt(tf.reduce_sum(tf.square(ea - ep), axis=1))
        neg_dist = tf.sqrt(tf.reduce_sum(tf.square(ea - en), axis=1))
        loss = tf.reduce_mean(tf.nn.softplus(pos_dist - neg_dist))  # soft-margin triplet loss
    grads = tape.gradient(loss, embed.trainable_variables)
    optimizer.apply_gradients(zip(grads, embed.trainable_variables))
    return loss, grads


for step in range(3):
    loss, grads = train_step(anchors, positives, negatives)
    print(f"step {step}: loss={float(loss):.4f}")
    if step == 0:
        nan = {v.path: bool(np.isnan(g.numpy()).any()) for v, g in zip(embed.trainable_variables, grads)}
        print("NaN in first-step gradient:", nan)
assert np.isnan(float(loss))
