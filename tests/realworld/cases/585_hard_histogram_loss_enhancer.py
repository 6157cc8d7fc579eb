"""Real-world case 585.

Source: https://github.com/albrateanu/LYT-Net/issues/16
Bug: the low-light enhancer is trained with only the histogram loss, which
bins the prediction with tf.histogram_fixed_width; the histogram is an integer
count of pixels per bin, so nothing flows back from the loss to the network
and Keras raises "No gradients provided for any variable".
Setting: functional Keras model (conv encoder/decoder), custom loss passed to
model.compile(), model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def histogram_loss(y_true, y_pred, bins=64):
    y_true_hist = tf.histogram_fixed_width(y_true, [0.0, 1.0], nbins=bins)
    y_pred_hist = tf.histogram_fixed_width(y_pred, [0.0, 1.0], nbins=bins)
    y_true_hist = tf.cast(y_true_hist, tf.float32)
    y_pred_hist = tf.cast(y_pred_hist, tf.float32)
    y_true_hist /= (tf.reduce_sum(y_true_hist) + 1e-5)
    y_pred_hist /= (tf.reduce_sum(y_pred_hist) + 1e-5)
    return tf.reduce_mean(tf.abs(y_true_hist - y_pred_hist))


def loss(y_true, y_pred):
    y_true = (y_true + 1.0) / 2.0
    y_pred = (y_pred + 1.0) / 2.0
    return histogram_loss(y_true, y_pred)


def build_enhancer(filters=16):
    inputs = keras.Input(shape=(32, 32, 3))
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(inputs)
    skip = x
    x = layers.Conv2D(filters, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    x = layers.UpSampling2D()(x)
    x = layers.Add()([x, skip])
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    outputs = layers.Conv2D(3, 3, padding="same", activation="tanh")(x)
    return keras.Model(inputs, outputs, name="lyt_enhancer")


rng = np.random.default_rng(0)
bright = rng.uniform(-1.0, 1.0, size=(32, 32, 32, 3)).astype("float32")
dark = (0.25 * (bright + 1.0) - 1.0).astype("float32")

model = build_enhancer()
model.compile(optimizer=keras.optimizers.Adam(2e-4), loss=loss)
model.fit(dark, bright, epochs=1, batch_size=8, verbose=0)
