"""Real-world case 822.

Source: https://github.com/tensorflow/tensorflow/issues/20355
Bug: a piecewise transfer function written as
`where(x < 0, 1 / (1 - x), log(x + 1))` evaluates both branches; where x is
exactly 1 the unused branch divides by zero, and its gradient (0 * inf)
comes back NaN through `where`, although the value and the loss are finite.
Here the transfer sits after a learnable per-feature gain on 0/1 indicator
features (gain initialised to ones), so the very first batch hits x == 1 and
the gain/offset weights receive NaN gradients. The NaN weights are then
swallowed by the ReLU downstream, so fit reports a finite, falling loss while
the model silently ignores its input features.
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
        return ops.where(x < 0, 1.0 / (1.0 - x), ops.log(x + 1.0))


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
