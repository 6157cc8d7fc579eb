"""Real-world case 493.

Source: https://github.com/tensorflow/tensorflow/issues/37245
Bug: inside a @tf.function, a Python `for t in tf.range(T)` loop (autograph turns it into a
tf.while_loop) collects per-step outputs with `ta.write(t, ...)` but discards the returned
TensorArray. In eager mode write() updates the array in place, so the code "works"; in graph
mode the write is a dead op, `ta.stack()` returns the untouched (all-zero) array, and, as the
report says, TensorFlow gives no warning or error. The loss is computed from that stack, so it
does not depend on the RNN cell or the output head at all: every gradient is None.
Setting: hand-rolled Keras 3 RNN (Dense cell + Dense head) unrolled by autograph in a
@tf.function train step with a raw GradientTape; step called from plain Python.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)  # seeds Python, NumPy and TensorFlow
T, B, D, H = 6, 16, 3, 8

cell = keras.layers.Dense(H, activation="tanh", name="cell")
head = keras.layers.Dense(1, name="head")
cell.build((None, D + H))
head.build((None, H))
optimizer = keras.optimizers.Adam(1e-2)
x = tf.constant(np.random.randn(B, T, D).astype("float32"))
y = tf.constant(np.cumsum(np.random.randn(T, B, 1), axis=0).astype("float32"))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        h = tf.zeros([B, H])
        ta = tf.TensorArray(tf.float32, size=T)
        for t in tf.range(T):
            h = cell(tf.concat([x[:, t], h], axis=1))
            ta.write(t, head(h))
        preds = ta.stack()
        loss = tf.reduce_mean(tf.square(preds - y))
    variables = cell.trainable_variables + head.trainable_variables
    grads = tape.gradient(loss, variables)
    return loss, preds, grads


variables = cell.trainable_variables + head.trainable_variables
for step in range(3):
    loss, preds, grads = train_step(x, y)
    print(f"step {step}: loss={float(loss):.4f} max|pred|={float(tf.reduce_max(tf.abs(preds))):.1f}")
    fine = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if fine:
        optimizer.apply_gradients(fine)
print({v.path: g for v, g in zip(variables, grads)})
assert all(g is None for g in grads)
