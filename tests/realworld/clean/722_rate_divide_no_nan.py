"""Clean control 722 (look-alike of case 322).

Source: https://github.com/tensorflow/tensorflow/issues/20091
The same claim rate with zero exposures, computed with tf.math.divide_no_nan: 0 where the
exposure is 0, with a finite gradient.
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
        rate = tf.math.divide_no_nan(counts, exposure)
        loss = tf.reduce_mean(tf.square(rate - observed_rate))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
