"""Broken: a layer is built but never called.

The model builds its three layers up front in ``build()`` (so that its weights exist
before training), but ``call()`` forgets the residual block. The loss does not depend on
the residual layer at all: its weights get ``None``. Keras 3 only *warns* ("Gradients do
not exist for variables ... when minimizing the loss") and trains the rest, so the
residual layer silently stays at its initial values.

    python examples/gallery/layer_never_called_broken.py     # the warning; residual never changes
    gradcheck examples/gallery/layer_never_called_broken.py  # GC108 at the model.fit line

The fix (layer_never_called_fixed.py): call the layer in ``call()``.
"""

import keras
import numpy as np


def make_data(n=512, seed=0):
    """A smooth function of three inputs."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (np.sin(x[:, :1]) + x[:, 1:2] * x[:, 2:3]).astype("float32")
    return x, y


class ResidualRegressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu", name="hidden")
        self.residual = keras.layers.Dense(32, activation="relu", name="residual")
        self.head = keras.layers.Dense(1, name="head")

    def build(self, input_shape):
        self.hidden.build(input_shape)
        self.residual.build((None, 32))
        self.head.build((None, 32))

    def call(self, inputs):
        h = self.hidden(inputs)
        return self.head(h)


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = ResidualRegressor()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    model.build((None, 3))
    before = model.residual.kernel.numpy().copy()
    model.fit(x, y, epochs=5, batch_size=64, verbose=2)  # expect: GC108
    print("residual layer trained:", not np.allclose(before, model.residual.kernel.numpy()))
