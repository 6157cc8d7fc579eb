"""Fixed: every layer that is built is called on the way to the output.

Pair of layer_never_called_broken.py. ``call()`` now applies the residual block
(``h = h + self.residual(h)``), so the loss depends on its weights and they train.

    python examples/gallery/layer_never_called_fixed.py     # no warning; residual layer trained: True
    gradcheck examples/gallery/layer_never_called_fixed.py  # no finding
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
        h = h + self.residual(h)
        return self.head(h)


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = ResidualRegressor()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    model.build((None, 3))
    before = model.residual.kernel.numpy().copy()
    model.fit(x, y, epochs=5, batch_size=64, verbose=2)
    print("residual layer trained:", not np.allclose(before, model.residual.kernel.numpy()))
