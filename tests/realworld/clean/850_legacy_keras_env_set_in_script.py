"""Control 850 (look-alike of case 450).

Source: https://github.com/tensorflow/tensorflow/issues/63848 (scripts that switch to Keras 2 themselves)
The same script, Keras 2 selected in the script, with a cross-entropy loss on the logits: it trains.
Setting: in-script TF_USE_LEGACY_KERAS, tf_keras Sequential, eager custom loop.
"""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

model = tf.keras.Sequential([layers.Dense(8, activation="relu", input_shape=(3,)), layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-3)
x = np.random.rand(16, 3).astype("float32")
y = np.random.randint(0, 4, size=(16,)).astype("float32")

for step in range(3):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    print(step, [g is None for g in grads])
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
