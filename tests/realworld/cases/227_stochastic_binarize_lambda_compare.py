"""Real-world case 227.

Source: https://github.com/tensorflow/tensorflow/issues/44125
Bug: a Lambda layer binarizes a sigmoid gate stochastically by comparing it
with uniform noise (random_uniform(...) <= x2) and casting the boolean to
float; the comparison has no gradient, so the Dense layer that produces the
gate gets none and train_on_batch() fails with "No gradients provided for any
variable".
Setting: Keras 3 functional model with a two-input Lambda layer, model.train_on_batch().
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)


def binarize(d):
    x1, x2 = d
    return x1 * ops.cast(keras.random.uniform(shape=ops.shape(x2)) <= x2, "float32")


inp = layers.Input((1,))
var = layers.Dense(1, activation="sigmoid")(inp)
out = layers.Lambda(binarize)([inp, var])

model = keras.Model(inp, out)
model.compile(loss="mse", optimizer="sgd")

x = np.random.normal(size=(128, 1)).astype("float32")
y = (x >= 0).astype("float32")
model.train_on_batch(x, y)
