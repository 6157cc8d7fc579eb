"""Real-world case 450.

Source: https://github.com/tensorflow/tensorflow/issues/63848 (scripts that switch to Keras 2 themselves)
Bug: the script selects Keras 2 itself (`os.environ["TF_USE_LEGACY_KERAS"] = "1"` before its own
`import tensorflow`) and builds its classifier with `from tensorflow.keras import layers`. Its
custom loop takes `tf.argmax` of the logits inside the tape and regresses on the class index, so
no variable gets a gradient.
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
        predicted = tf.cast(tf.argmax(logits, axis=-1), tf.float32)
        loss = tf.reduce_mean(tf.square(predicted - y))
    grads = tape.gradient(loss, model.trainable_variables)
    print(step, [g is None for g in grads])
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
