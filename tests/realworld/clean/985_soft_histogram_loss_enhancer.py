"""Clean control 985 (expected clean).

Source: https://github.com/albrateanu/LYT-Net/issues/16 (fixed form)
The histogram loss uses soft binning: each pixel contributes a Gaussian weight
to every bin centre, so the histogram is a smooth function of the prediction
and every weight of the enhancer gets a gradient.
Setting: functional Keras model (conv encoder/decoder), custom loss passed to
model.compile(), model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def histogram_loss(y_true, y_pred, bins=64, sigma=0.02):
    bin_centres = tf.linspace(0.0, 1.0, bins)

    def soft_histogram(x):
        x = tf.reshape(x, [-1, 1])
        weights = tf.exp(-0.5 * ((x - bin_centres) / sigma) ** 2)
        return tf.reduce_sum(weights, axis=0)

    y_true_hist = soft_histogram(y_true)
    y_pred_hist = soft_histogram(y_pred)
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
