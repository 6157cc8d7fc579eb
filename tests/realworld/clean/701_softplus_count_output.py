"""Clean control 701 (look-alike of case 301).

Source: https://github.com/jvargasmu/population_estimation/issues/68
The same count regression with the same initialisation, ending in a softplus (the fix the
maintainers chose): its gradient is never exactly zero, so the output unit learns its way
back from negative pre-activations.
"""
import keras
import numpy as np

keras.utils.set_random_seed(6)
features = keras.Input((6,))
hidden = keras.layers.Dense(32, activation="relu")(features)
count = keras.layers.Dense(1, activation="softplus")(hidden)
model = keras.Model(features, count)
model.compile(optimizer="adam", loss="mse")
x = np.random.uniform(50.0, 500.0, size=(256, 6)).astype("float32")  # built-up areas, unnormalised
y = np.random.poisson(40.0, size=(256, 1)).astype("float32")
model.fit(x, y, batch_size=64, epochs=3, verbose=0)
