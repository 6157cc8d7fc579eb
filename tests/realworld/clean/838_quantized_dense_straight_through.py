"""Real-world control 838 (twin of case 828).

Source: https://github.com/tensorflow/tensorflow/issues/5888
Same k-bit quantised Dense layer as case 828, with the standard fix from the
quantisation literature: a straight-through estimator, so the forward pass
uses the rounded weights and the backward pass treats round as identity.
Setting: Keras 3 custom layer, keras.ops, model.fit.
"""
import numpy as np
import keras
from keras import layers, ops


class QuantDense(layers.Layer):
    def __init__(self, units, bits=4, **kwargs):
        super().__init__(**kwargs)
        self.units, self.bits = units, bits

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def quantize_kernel(self, w):
        levels = 2 ** self.bits - 1
        w = ops.tanh(w)
        w = w / (2.0 * ops.max(ops.abs(w))) + 0.5
        w_q = w + ops.stop_gradient(ops.round(w * levels) / levels - w)  # straight-through
        return 2.0 * w_q - 1.0

    def call(self, x):
        return ops.matmul(x, self.quantize_kernel(self.kernel)) + self.bias


rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 20)).astype("float32")
y_train = (x_train[:, :5].sum(axis=1, keepdims=True) > 0).astype("float32")

inputs = keras.Input(shape=(20,))
h = QuantDense(32, name="qdense")(inputs)
h = layers.ReLU()(h)
outputs = layers.Dense(1, activation="sigmoid", name="out")(h)
model = keras.Model(inputs, outputs, name="quant_net")
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=64, epochs=3, verbose=2)
