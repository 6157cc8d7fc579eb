"""Clean control 894 (look-alike of case 494).

Source: https://github.com/tensorflow/tensorflow/issues/30199
The same soft-margin triplet train step and the same batch, in which some positives are the
very same sample as their anchor, but the squared distance is clamped away from zero before
the square root (tf.maximum(..., keras.backend.epsilon()), as Keras' own siamese example
does). Duplicate pairs now get a finite gradient, every weight stays finite and the loss
falls. The op is inside the @tf.function train step; the step is called from plain Python.
Setting: Keras 3 Sequential embedding network, @tf.function train step with a raw
GradientTape and a Keras optimizer.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)  # seeds Python, NumPy and TensorFlow
B, D, EPS = 32, 10, keras.backend.epsilon()

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
        pos_dist = tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(ea - ep), axis=1), EPS))
        neg_dist = tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(ea - en), axis=1), EPS))
        loss = tf.reduce_mean(tf.nn.softplus(pos_dist - neg_dist))  # soft-margin triplet loss
    grads = tape.gradient(loss, embed.trainable_variables)
    for g in grads:
        tf.debugging.assert_all_finite(g, "non-finite embedding gradient")
    optimizer.apply_gradients(zip(grads, embed.trainable_variables))
    return loss


losses = [float(train_step(anchors, positives, negatives)) for _ in range(50)]
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
