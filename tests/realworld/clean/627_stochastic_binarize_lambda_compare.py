"""Clean control 627 (expected clean).

Stochastic binarization with a straight-through estimator: the forward pass
still compares the sigmoid gate with uniform noise and casts the boolean, but
the result is wrapped as x2 + stop_gradient(hard - x2), so the Dense layer
producing the gate gets a gradient.
Setting: Keras 3 functional model with a two-input Lambda layer, model.train_on_batch().
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)


def binarize(d):
    x1, x2 = d
    hard = ops.cast(keras.random.uniform(shape=ops.shape(x2)) <= x2, "float32")
    return x1 * (x2 + ops.stop_gradient(hard - x2))


inp = layers.Input((1,))
var = layers.Dense(1, activation="sigmoid")(inp)
out = layers.Lambda(binarize)([inp, var])

model = keras.Model(inp, out)
model.compile(loss="mse", optimizer="sgd")

x = np.random.normal(size=(128, 1)).astype("float32")
y = (x >= 0).astype("float32")
model.train_on_batch(x, y)
print("trained without gradient warnings")
