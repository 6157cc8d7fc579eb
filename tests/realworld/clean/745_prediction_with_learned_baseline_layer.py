"""Clean control 745 (expected clean).

A regression whose prediction is assembled inside the tape from several trained layers: a
residual block plus a skip connection, minus a learned per-feature baseline layer applied to
the same input. Every part is the prediction; the target y is data.
Setting: Keras 3 layers called inside an eager tape, squared and Huber errors.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
block = keras.layers.Dense(6, activation="relu")
head = keras.layers.Dense(6)
baseline = keras.layers.Dense(6, use_bias=False)
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.rand(32, 6).astype("float32")
y = np.random.rand(32, 6).astype("float32")

with tf.GradientTape() as tape:
    residual = x + block(x)
    pred = head(residual) - baseline(x)
    loss = tf.reduce_mean(tf.square(y - pred)) + keras.losses.Huber()(y, pred + 0.1 * baseline(residual))
variables = block.trainable_variables + head.trainable_variables + baseline.trainable_variables
grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
print("loss", float(loss))
