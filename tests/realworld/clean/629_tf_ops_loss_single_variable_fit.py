"""Clean control 629 (expected clean).

A single tf.Variable fitted in a custom loop whose hand-written loss uses
TensorFlow ops on the prediction tensor (no .numpy() round trip), so the tape
sees the whole computation.
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
    return tf.reduce_mean(tf.abs(residual) ** 1.5) + 0.1 * tf.reduce_mean(tf.nn.sigmoid(residual))


for step in range(3):
    with tf.GradientTape() as tape:
        pred = w[0] * x + w[1]
        loss = loss_fn(pred, y)
    grads = tape.gradient(loss, [w])
    assert all(g is not None for g in grads)
    optimizer.apply_gradients(zip(grads, [w]))
    print("step", step, "loss", float(loss))
