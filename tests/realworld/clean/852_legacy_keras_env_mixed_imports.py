"""Control 852 (look-alike of case 452).

Source: https://github.com/tensorflow/probability/issues/1795 (Keras 2 switched on inside the script)
The same mixed imports under the in-script switch; the encoder's features feed the head
directly: both train.
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
        features = encoder(x, training=True)
        loss = tf.reduce_mean(tf.square(head(features, training=True) - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print(step, float(loss))
