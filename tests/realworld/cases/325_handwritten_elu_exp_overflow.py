"""Real-world case 325.

Source: https://github.com/tensorflow/tensorflow/issues/2540
Bug: "tf.select unnecessarily propagates NaNs in gradients": y = tf.where(x > 0, 0, exp(x))
gives a NaN gradient for x = 1e10 although the exp branch is not selected. The same happens
to the hand-written ELU suggested as a workaround in tensorflow/tensorflow#11091,
tf.where(x >= 0, x, tf.exp(x) - 1): for large positive pre-activations exp(x) overflows to
inf in the branch that is not taken, and its gradient (0 * inf) is NaN.
Setting: Keras 3 Sequential model with a custom activation function, unnormalised features
in the hundreds, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf


def elu(x):
    return tf.where(x >= 0.0, x, tf.exp(x) - 1.0)


keras.utils.set_random_seed(0)
model = keras.Sequential(
    [keras.Input((8,)), keras.layers.Dense(32, activation=elu), keras.layers.Dense(1)]
)
model.compile(optimizer="adam", loss="mse")
x = np.random.uniform(0.0, 600.0, size=(128, 8)).astype("float32")  # raw sensor readings
y = np.random.randn(128, 1).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
