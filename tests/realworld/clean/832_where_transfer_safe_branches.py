"""Real-world control 832 (twin of case 822).

Source: https://github.com/tensorflow/tensorflow/issues/20355
Same learnable gain + piecewise transfer as case 822, with the maintainers'
fix: each branch of the `where` is evaluated on inputs that are safe for it
(double-where), so the unused branch never produces inf and no NaN gradient
comes back through `where`. Trains normally.
Setting: Keras 3 model.fit, custom layers, keras.ops.
"""
import numpy as np
import keras
from keras import layers, ops


class FeatureGain(layers.Layer):
    """Learnable gain and offset per raw indicator feature."""

    def build(self, input_shape):
        self.gain = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="gain")
        self.offset = self.add_weight(shape=(input_shape[-1],), initializer="zeros", name="offset")

    def call(self, x):
        return x * self.gain + self.offset


class Transfer(layers.Layer):
    """1 / (1 - x) for x < 0, log(1 + x) otherwise: continuous, slope 1 at 0."""

    def call(self, x):
        neg = ops.where(x < 0, x, 0.0)
        pos = ops.where(x < 0, 0.0, x)
        return ops.where(x < 0, 1.0 / (1.0 - neg), ops.log(pos + 1.0))


rng = np.random.default_rng(0)
x_train = rng.integers(0, 2, size=(256, 8)).astype("float32")
y_train = (x_train @ rng.normal(size=(8, 1))).astype("float32")

inputs = keras.Input(shape=(8,))
h = FeatureGain(name="feature_gain")(inputs)
h = Transfer(name="transfer")(h)
h = layers.Dense(16, activation="relu")(h)
outputs = layers.Dense(1)(h)
model = keras.Model(inputs, outputs, name="transfer_net")
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=2)
