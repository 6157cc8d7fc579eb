"""Real-world case 584.

Source: https://github.com/bayesflow-org/bayesflow/issues/331
Bug: the hidden block of the coupling subnet creates a `projector` weight in
build() whenever the input width differs from `units`, but call() only uses it
on the residual branch; the coupling flow builds its subnet with
residual=False, so the projector of the first block is never read and Keras
warns that it has no gradient.
Setting: Keras 3 custom layers (build/call) inside a subclassed flow model that
overrides compute_loss, trained with model.fit().
"""
import math

import numpy as np
import keras
from keras import layers


class ConfigurableHiddenBlock(keras.layers.Layer):
    def __init__(self, units=64, activation="mish", residual=True, dropout=0.05, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.activation_fn = keras.activations.get(activation)
        self.residual = residual
        self.dense = layers.Dense(units, kernel_initializer="he_normal")
        self.dropout = layers.Dropout(dropout) if dropout else None

    def build(self, input_shape):
        self.dense.build(input_shape)
        if input_shape[-1] != self.units:
            self.projector = self.add_weight(
                shape=(input_shape[-1], self.units), initializer="glorot_uniform",
                trainable=True, name="projector")
        else:
            self.projector = None
        if self.dropout is not None:
            self.dropout.build(self.dense.compute_output_shape(input_shape))

    def call(self, inputs, training=False):
        x = self.dense(inputs)
        if self.dropout is not None:
            x = self.dropout(x, training=training)
        if self.residual:
            x = x + (inputs if self.projector is None else keras.ops.matmul(inputs, self.projector))
        return self.activation_fn(x)

    def compute_output_shape(self, input_shape):
        return self.dense.compute_output_shape(input_shape)


class MLP(keras.layers.Layer):
    def __init__(self, widths=(64, 64), residual=False, **kwargs):
        super().__init__(**kwargs)
        self.blocks = [ConfigurableHiddenBlock(w, residual=residual) for w in widths]

    def build(self, input_shape):
        for block in self.blocks:
            block.build(input_shape)
            input_shape = block.compute_output_shape(input_shape)

    def call(self, x, training=False):
        for block in self.blocks:
            x = block(x, training=training)
        return x


class SingleCoupling(keras.layers.Layer):
    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.half = dim // 2
        self.subnet = MLP(residual=False)
        self.to_params = layers.Dense(2 * (dim - self.half))

    def call(self, x, training=False):
        x1, x2 = x[:, :self.half], x[:, self.half:]
        params = self.to_params(self.subnet(x1, training=training))
        log_scale, shift = keras.ops.split(params, 2, axis=-1)
        log_scale = keras.ops.tanh(log_scale)
        z2 = x2 * keras.ops.exp(log_scale) + shift
        return keras.ops.concatenate([z2, x1], axis=-1), keras.ops.sum(log_scale, axis=-1)


class CouplingFlow(keras.Model):
    def __init__(self, dim=4, depth=2, **kwargs):
        super().__init__(**kwargs)
        self.couplings = [SingleCoupling(dim) for _ in range(depth)]

    def call(self, x, training=False):
        log_det = 0.0
        for coupling in self.couplings:
            x, ld = coupling(x, training=training)
            log_det = log_det + ld
        return x, log_det

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        z, log_det = y_pred
        log_prob = -0.5 * keras.ops.sum(z ** 2, axis=-1) - 0.5 * z.shape[-1] * math.log(2 * math.pi)
        return -keras.ops.mean(log_prob + log_det)


rng = np.random.default_rng(0)
theta = rng.normal(size=(256, 2)).astype("float32")
data = np.concatenate([theta, theta ** 2 + 0.1 * rng.normal(size=(256, 2))], axis=1).astype("float32")

flow = CouplingFlow(dim=4, depth=2)
flow.compile(optimizer=keras.optimizers.Adam(1e-3))
flow.fit(data, epochs=2, batch_size=64, verbose=0)
