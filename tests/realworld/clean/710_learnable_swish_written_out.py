"""Clean control 710 (look-alike of case 310).

Source: https://github.com/tensorflow/tensorflow/issues/127690
The same learnable per-unit swish written out as x * sigmoid(beta * x): TensorFlow
differentiates it, and beta's gradient has beta's shape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class LearnableSwish(keras.layers.Layer):
    def build(self, input_shape):
        self.beta = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="beta")

    def call(self, x):
        return x * tf.sigmoid(self.beta * x)


model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8), LearnableSwish(), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.randn(32, 6).astype("float32")
y = np.random.randn(32, 1).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
