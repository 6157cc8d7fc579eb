"""Clean control 923 (expected clean).

The quantization layer of case 523 written the TF2 way: the quantizer is built
from TensorFlow ops and wrapped in tf.custom_gradient with an identity
(straight-through) gradient, so the rounding is skipped in the backward pass
and the layers before the quantizer train.
Setting: tf.keras (Keras 2) functional MLP with a custom layer, model.fit.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.random.set_seed(0)
np.random.seed(0)


@tf.custom_gradient
def quantize_ste(x):
    def grad(dy):
        return dy
    return tf.math.ceil(x * 2.0 ** 5) / 2.0 ** 5, grad


class Quantization(layers.Layer):
    """Quantize in the forward pass, pass gradients through unchanged."""

    def call(self, inputs):
        return quantize_ste(inputs)


inputs = layers.Input((20,))
x = layers.Dense(32, activation="relu", name="fc1")(inputs)
x = layers.Dense(16, activation="relu", name="fc2")(x)
x = Quantization(name="quantize")(x)
outputs = layers.Dense(1, name="head")(x)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")

x_train = np.random.rand(128, 20).astype("float32")
y_train = x_train.sum(axis=1, keepdims=True)
model.fit(x_train, y_train, epochs=2, batch_size=32, verbose=0)
print("loss:", model.evaluate(x_train, y_train, verbose=0))
