"""Real-world case 452.

Source: https://github.com/tensorflow/probability/issues/1795 (Keras 2 switched on inside the script)
Bug: the script switches to Keras 2 itself and mixes `import tf_keras` (the model) with
`from tensorflow.keras import layers` (the layers), which is the same package once the switch
is on. Its two-stage regressor wraps the encoder's features in `tf.stop_gradient` inside the
tape (left from a frozen-encoder experiment), so the encoder gets no gradient; Keras warns.
Setting: in-script TF_USE_LEGACY_KERAS, tf_keras Sequential + tensorflow.keras layers, eager loop.
"""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np
import tensorflow as tf
import tf_keras
from tensorflow.keras import layers

encoder = tf_keras.Sequential([layers.Dense(8, activation="tanh", input_shape=(3,))], name="encoder")
head = tf_keras.Sequential([layers.Dense(1, input_shape=(8,))], name="head")
optimizer = tf_keras.optimizers.SGD(0.01)
x = np.random.rand(32, 3).astype("float32")
y = np.random.rand(32, 1).astype("float32")
variables = encoder.trainable_variables + head.trainable_variables

for step in range(3):
    with tf.GradientTape() as tape:
        features = tf.stop_gradient(encoder(x, training=True))
        loss = tf.reduce_mean(tf.square(head(features, training=True) - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print(step, float(loss))
