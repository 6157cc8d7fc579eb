"""Real-world case 420.

Source: https://github.com/tensorflow/addons/issues/693
Bug: "Lost gradient after clipping in focal loss?": the focal loss clips
y_pred to [eps, 1 - eps] with K.clip / clip_by_value, which "doesn't seem to
provide a gradient for values that have been clipped". With a sigmoid output
saturated by a large initial bias, every prediction is clipped, so the
gradient of the loss is identically zero and the detector silently never
learns.
Setting: Keras 3 Sequential binary classifier, model.fit with a custom focal
loss taking probabilities.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
EPS = 1e-4


def focal_loss(y_true, y_pred, gamma=2.0, alpha=0.25):
    y_pred = tf.clip_by_value(y_pred, EPS, 1.0 - EPS)
    p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    a_t = y_true * alpha + (1 - y_true) * (1 - alpha)
    return tf.reduce_mean(-a_t * tf.pow(1.0 - p_t, gamma) * tf.math.log(p_t))


model = keras.Sequential([
    keras.Input((4,)),
    keras.layers.Dense(8, activation="relu", name="hidden"),
    keras.layers.Dense(1, activation="sigmoid", bias_initializer=keras.initializers.Constant(12.0), name="score"),
], name="detector")
model.compile(optimizer="sgd", loss=focal_loss)
x = 0.1 * np.random.rand(64, 4).astype("float32")
y = (np.random.rand(64, 1) > 0.9).astype("float32")
model.fit(x, y, batch_size=32, epochs=2, verbose=2)
