"""Real-world case 301.

Source: https://github.com/jvargasmu/population_estimation/issues/68
Bug: a network regressing a non-negative count (population) ends in a ReLU: "Sometimes the
initial solution predicts only zeros (due to RELU activation). And hence, no gradients
emerge." With unnormalised, all-positive features the output unit's pre-activation has the
same sign for every sample; for an unlucky initialisation it is negative on the whole batch,
the output ReLU is dead and every weight gets an all-zero gradient (the same as
chelsea0x3b/dfdx#486: "the ReLU on the output layer caused zero gradients").
Setting: Keras 3 functional model, model.fit with mean squared error, features in the hundreds.
"""
import keras
import numpy as np

keras.utils.set_random_seed(6)
features = keras.Input((6,))
hidden = keras.layers.Dense(32, activation="relu")(features)
count = keras.layers.Dense(1, activation="relu")(hidden)
model = keras.Model(features, count)
model.compile(optimizer="adam", loss="mse")
x = np.random.uniform(50.0, 500.0, size=(256, 6)).astype("float32")  # built-up areas, unnormalised
y = np.random.poisson(40.0, size=(256, 1)).astype("float32")
model.fit(x, y, batch_size=64, epochs=3, verbose=0)
