"""Real-world case 421.

Source: https://github.com/tensorflow/tensorflow/issues/22378
Bug: a hand-written SGD step updates the model with
`model.w = model.w - lr * dw` (as in the report's keras_backprop). That
rebinds the attribute to a plain tensor computed outside any tape; on the next
step the tape does not watch it, so `tape.gradient(l, model.w)` is None and
the update is skipped.
Setting: tf.Module linear model, eager, manual gradient descent loop.
"""
import numpy as np
import tensorflow as tf


class Linear(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.zeros((3, 1)), name="w")

    def __call__(self, x):
        return tf.matmul(x, self.w)


def keras_backprop(model, lr, x, y_true):
    with tf.GradientTape() as tape:
        y_pred = model(x)
        l = tf.reduce_mean(tf.square(y_true - y_pred))
    dw = tape.gradient(l, model.w)
    print("dw is None:", dw is None)
    if dw is not None:
        model.w = model.w - lr * dw
    return l


model = Linear()
x = tf.constant(np.random.rand(8, 3).astype("float32"))
y = tf.constant(np.random.rand(8, 1).astype("float32"))
for step in range(2):
    print(step, float(keras_backprop(model, 0.1, x, y)))
