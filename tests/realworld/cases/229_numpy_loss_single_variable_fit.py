"""Real-world case 229.

Source: https://github.com/tensorflow/tensorflow/issues/50111
Bug: a custom training loop fits a single tf.Variable with a hand-written loss;
the prediction tensor is converted to a NumPy array before it is passed to the
loss function, which computes with NumPy, so the loss the tape sees is a
constant and apply_gradients fails with "No gradients provided for any
variable: ['Variable:0']" (the user: "I converted the tensor into a numpy array
when passing it to my loss function").
Setting: raw tf.Variable, Keras 3 optimizer, eager GradientTape custom loop.
"""
import numpy as np
import tensorflow as tf
import keras

x = np.linspace(0.0, 1.0, 50).astype("float32")
y = 3.0 * x + 0.5
w = tf.Variable([0.1, 0.0])
optimizer = keras.optimizers.Adam(learning_rate=0.1)


def loss_fn(pred, target):
    residual = pred - target
    return np.mean(np.abs(residual) ** 1.5) + 0.1 * np.mean(residual > 0)


for step in range(3):
    with tf.GradientTape() as tape:
        pred = w[0] * x + w[1]
        loss = tf.constant(loss_fn(pred.numpy(), y), dtype=tf.float32)
    grads = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(grads, [w]))
    print("step", step, "loss", float(loss))
