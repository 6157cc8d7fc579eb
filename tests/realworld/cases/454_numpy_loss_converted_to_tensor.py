"""Real-world case 454.

Source: https://stackoverflow.com/questions/56916313 (loss written with NumPy inside GradientTape)
Bug: a regression loop written from a NumPy prototype computes the loss with
`np.mean(np.abs(pred - y))` inside the tape and wraps it in `tf.convert_to_tensor` to silence the error. The prediction leaves TensorFlow, the target
handed to `tape.gradient` is a `numpy.float32`, and no variable can get a gradient.
Setting: Keras 3 Sequential, eager custom loop, tf.convert_to_tensor around a NumPy loss.
"""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")

for step in range(3):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = tf.convert_to_tensor(np.mean(np.abs(pred - y)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss))
