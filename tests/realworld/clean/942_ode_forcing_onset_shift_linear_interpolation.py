"""Real-world control 942 (fixed twin of case 542).

Source: https://github.com/lululxvi/deepxde/issues/100
Fix: the forcing is read at the shifted time by linear interpolation between
the two neighbouring samples; the integer index only selects the samples and
the fractional part, which depends on the shift, weights them, so both the
onset shift and the decay rate are identified.
Setting: Keras 3 custom Layer with add_weight in build(), explicit Euler
integration unrolled in call(), keras.ops, functional model, compile/fit.
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)

N_STEPS = 40
DT = 0.05
FORCING = (1.0 + np.sin(np.linspace(0.0, 6.0 * np.pi, 120))).astype("float32")


class DelayedForcingODE(layers.Layer):
    """Integrates dy/dt = -k y + C(t + shift) with a learned k and shift."""

    def __init__(self, forcing, n_steps, dt, **kwargs):
        super().__init__(**kwargs)
        self.forcing = ops.convert_to_tensor(forcing)
        self.n_steps = n_steps
        self.dt = dt

    def build(self, input_shape):
        self.shift = self.add_weight(
            shape=(), initializer=keras.initializers.Constant(5.0), name="shift")
        self.log_rate = self.add_weight(shape=(), initializer="zeros", name="log_rate")

    def forcing_at(self, step):
        position = step + self.shift
        lower = ops.floor(position)
        frac = position - lower
        index = ops.cast(lower, "int32")
        return (1.0 - frac) * ops.take(self.forcing, index) + frac * ops.take(self.forcing, index + 1)

    def call(self, y0):
        rate = ops.exp(self.log_rate)
        y = y0
        trajectory = []
        for step in range(self.n_steps):
            y = y + self.dt * (-rate * y + self.forcing_at(step))
            trajectory.append(y)
        return ops.concatenate(trajectory, axis=-1)


def reference_trajectories(y0, shift, rate):
    """Ground truth with the forcing interpolated at the true onset shift."""
    y = y0.copy()
    out = []
    for step in range(N_STEPS):
        position = step + shift
        lower = int(np.floor(position))
        frac = position - lower
        forcing = (1.0 - frac) * FORCING[lower] + frac * FORCING[lower + 1]
        y = y + DT * (-rate * y + forcing)
        out.append(y)
    return np.concatenate(out, axis=-1).astype("float32")


y0 = rng.uniform(0.0, 2.0, size=(64, 1)).astype("float32")
observed = reference_trajectories(y0, shift=12.3, rate=0.7)

inputs = keras.Input(shape=(1,), name="y0")
outputs = DelayedForcingODE(FORCING, N_STEPS, DT, name="delayed_forcing_ode")(inputs)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1), loss="mse")
model.fit(y0, observed, batch_size=16, epochs=2, verbose=2)
