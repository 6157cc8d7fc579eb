"""Real-world control 939 (fixed twin of case 539).

Source: https://github.com/tensorflow/tensorflow/issues/42542
Fix: the per-position seasonal slices are taken from the seasonality weight
inside call(), every time the layer runs, instead of once in build(), so the
slices are reads of the variable in the training step and the initial
seasonality is learned along with alpha, gamma and the level.
Setting: Keras 3 custom Layer with two outputs, functional model, fit().
"""
from collections import deque

import numpy as np
import keras
from keras import layers, ops

T = 12
HORIZON = 3
SEASON = 4

rng = np.random.default_rng(0)
t_axis = np.arange(600)
load = 1.0 + 0.3 * np.sin(2 * np.pi * t_axis / SEASON) + 0.05 * rng.normal(size=t_axis.shape)
windows = np.stack([load[i:i + T + HORIZON] for i in range(len(load) - T - HORIZON)]).astype("float32")
x_train, y_train = windows[:, :T, None], windows[:, T:]


class ExponentialSmoothing(layers.Layer):
    """Holt-Winters style level/seasonality smoothing with learned coefficients."""

    def __init__(self, horizon, season_length, **kwargs):
        super().__init__(**kwargs)
        self.horizon = horizon
        self.m = season_length

    def build(self, input_shape):
        const = keras.initializers.Constant
        self.alpha = self.add_weight(name="alpha", shape=(1,), initializer=const(0.5))
        self.gamma = self.add_weight(name="gamma", shape=(1,), initializer=const(0.5))
        self.init_seasonality = self.add_weight(name="init_seasonality", shape=(self.m,), initializer=const(1.0))
        self.init_level = self.add_weight(name="init_level", shape=(1,), initializer=const(1.0))

    def call(self, x):
        # one slot per season position, rotated through a deque
        seasonal_slots = [ops.slice(self.init_seasonality, (i,), (1,)) for i in range(self.m)]
        season = deque(seasonal_slots, maxlen=self.m)
        level = self.init_level
        normalized = []
        for step in range(x.shape[1]):
            y_t = x[:, step, :]
            s_t = season.popleft()
            l_t = self.alpha * y_t / s_t + (1.0 - self.alpha) * level
            season.append(self.gamma * y_t / l_t + (1.0 - self.gamma) * s_t)
            normalized.append(y_t / (s_t * l_t))
            level = l_t
        x_norm = ops.stack(normalized, axis=1)
        future_season = ops.concatenate([season[h] for h in range(self.horizon)], axis=-1)
        return x_norm, level * future_season


keras.utils.set_random_seed(0)
inputs = keras.Input(shape=(T, 1))
x_norm, denorm = ExponentialSmoothing(HORIZON, SEASON, name="es")(inputs)
h = layers.GRU(5, name="gru")(x_norm)
normalized_forecast = layers.Dense(HORIZON, name="forecast")(h)
forecast = layers.Multiply(name="denormalize")([normalized_forecast, denorm])
model = keras.Model(inputs, forecast)
model.compile(optimizer=keras.optimizers.RMSprop(1e-3), loss="mse")
model.fit(x_train, y_train, batch_size=48, epochs=1, shuffle=False, verbose=0)
