"""Real-world case 523.

Source: https://github.com/keras-team/keras/issues/8526
Bug: a custom Keras "Quantization" layer should quantize activations in the
forward pass and behave as the identity in the backward pass. Following the
TF1 recipe, the quantizer is a NumPy function wrapped in tf.py_func and an
identity gradient is registered for it through graph.gradient_override_map.
Under TF2 the override is never consulted: the PyFunc op is differentiated by
its own type, which has no gradient, so every layer before the quantizer is cut
off and fit() warns "Gradients do not exist for variables ['fc1/kernel:0', ...]".
Setting: tf.keras (Keras 2) functional MLP with a custom layer, model.fit, TF1-era gradient override.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.random.set_seed(0)
np.random.seed(0)


@tf.RegisterGradient("QuantizeIdentityGrad")
def _identity_grad(op, grad):
    return grad


def quantization(x):
    return (np.ceil(x * 2.0 ** 5) / 2.0 ** 5).astype(np.float32)


class Quantization(layers.Layer):
    """Quantize in the forward pass, pass gradients through unchanged."""

    def call(self, inputs):
        g = tf.compat.v1.get_default_graph()
        with g.gradient_override_map({"PyFunc": "QuantizeIdentityGrad"}):
            y = tf.compat.v1.py_func(quantization, [inputs], tf.float32)
        y.set_shape(inputs.shape)
        return y


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
