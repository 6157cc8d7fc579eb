"""Clean control 805 (look-alike of case 405).

Source: https://github.com/tensorflow/tensorflow/issues/55812
The same masked up-weighting done with TensorFlow ops (tf.where on a
comparison of y_true), so the loss stays connected to y_pred.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


def penalised_mse(y_true, y_pred):
    error = y_true - y_pred
    error = tf.where(y_true > 5, error * 1.5, error)
    return tf.reduce_mean(tf.square(error))


x = np.random.rand(64, 8).astype("float32")
y = (10 * x[:, :1]).astype("float32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=penalised_mse, run_eagerly=True)
model.fit(ds, epochs=1, verbose=2)
