"""Real-world case 311.

Source: https://github.com/tensorflow/tensorflow/issues/30883
Bug: "How to define a ReLU with TensorFlow custom_gradient?": the "standard definition of
ReLU's gradient", 1 where x > 0 and 0 otherwise, does not train like tf.nn.relu, because the
gradient function returns the local derivative alone instead of multiplying the upstream
gradient dy by it.
Setting: Keras 3 Sequential model using the custom ReLU as a Dense activation, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def relu(x):
    def grad(dy):
        return tf.where(x > 0, tf.ones_like(dy), tf.zeros_like(dy))

    return tf.nn.relu(x), grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation=relu), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
x = np.random.randn(128, 10).astype("float32")
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
