"""Clean control 893 (look-alike of case 493).

Source: https://github.com/tensorflow/tensorflow/issues/37245
The fix given for the report: keep the TensorArray that write() returns,
`ta = ta.write(t, head(h))`. Autograph then carries the array through the tf.while_loop as a
loop variable, ta.stack() holds the per-step predictions and every weight of the RNN cell and
of the head gets a gradient; the loss falls.
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
            ta = ta.write(t, head(h))
        preds = ta.stack()
        loss = tf.reduce_mean(tf.square(preds - y))
    variables = cell.trainable_variables + head.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


losses = [float(train_step(x, y)) for _ in range(60)]
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
assert losses[-1] < 0.8 * losses[0], losses
