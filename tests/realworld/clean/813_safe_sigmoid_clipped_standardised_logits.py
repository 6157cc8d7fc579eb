"""Clean control 813 (look-alike of case 413).

Source: https://github.com/tensorflow/tensorflow/issues/89110
The same safe_sigmoid on standardised features: the logits stay inside
[-10, 10] and the clip is a no-op for the gradient.
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
raw = rng.uniform(50.0, 100.0, (64, 3)).astype("float32")
X = tf.constant((raw - raw.mean(0)) / raw.std(0))
Y = tf.constant((rng.random((64, 1)) > 0.5).astype("float32"))
W = tf.Variable(tf.fill((3, 1), 0.5), name="W")


def safe_sigmoid(logits):
    clipped = tf.clip_by_value(logits, -10.0, 10.0)
    return tf.sigmoid(clipped)


for step in range(3):
    with tf.GradientTape() as tape:
        tape.watch(W)
        logits_hat = tf.matmul(X, W)
        p_hat = safe_sigmoid(logits_hat)
        loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(Y, p_hat))
    gradients = tape.gradient(loss, W)
    W.assign_sub(0.1 * gradients)
    print(step, float(loss), float(tf.reduce_max(tf.abs(gradients))))
