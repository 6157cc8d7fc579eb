"""Clean control 715 (look-alike of cases 311-314).

Source: https://github.com/larq/larq/pull/267
A binarising quantizer with a straight-through estimator, as larq writes it: the forward
pass is sign(x), whose finite differences are zero, and the custom gradient passes dy where
|x| <= 1. The difference is the point of a surrogate gradient, not a mistake.
Setting: Keras 3 Sequential model with the quantizer as an activation, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def ste_sign(x):
    def grad(dy):
        return dy * tf.cast(tf.abs(x) <= 1.0, dy.dtype)

    return tf.sign(x), grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation=ste_sign), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
x = np.random.randn(128, 10).astype("float32")
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
