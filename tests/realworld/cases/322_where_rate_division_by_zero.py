"""Real-world case 322.

Source: https://github.com/tensorflow/tensorflow/issues/20091
Bug: "NaN appearing on tf.gradients calculation with tf.where and division by zero on the
false branch": a rate guarded with tf.where(exposure > 0, counts / exposure, 0) is finite in
the forward pass, but tf.where sends a zero gradient into the division wherever it was not
taken, the division's derivative there is 1 / 0 = inf, and 0 * inf is NaN.
Setting: Keras 3 Sequential model predicting claim counts, eager custom loop, a claim rate
per policy-year with some zero exposures.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)
features = np.random.randn(64, 5).astype("float32")
exposure = np.random.choice([0.0, 0.5, 1.0, 2.0], size=(64, 1)).astype("float32")  # policy-years
observed_rate = np.random.rand(64, 1).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        counts = model(features)
        rate = tf.where(exposure > 0, counts / exposure, tf.zeros_like(counts))
        loss = tf.reduce_mean(tf.square(rate - observed_rate))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
