"""Real-world case 310.

Source: https://github.com/tensorflow/tensorflow/issues/127690
Bug: "SiLU/Swish returns incorrect gradients for broadcasted Tensor beta": tf.nn.silu accepts
a tensor beta, but its custom gradient reduces the beta derivative to a scalar whatever
beta's shape ("the beta gradient should have shape (2,) ... Instead it has shape ()"), so
with a per-unit beta the derivatives of unrelated units are summed into one number.
Setting: Keras 3 custom layer with a learnable per-unit beta (a learnable swish), eager
custom loop; reported against TensorFlow 2.21.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class LearnableSwish(keras.layers.Layer):
    def build(self, input_shape):
        self.beta = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="beta")

    def call(self, x):
        return tf.nn.silu(x, beta=self.beta)


model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8), LearnableSwish(), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.randn(32, 6).astype("float32")
y = np.random.randn(32, 1).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
