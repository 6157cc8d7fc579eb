"""Real-world control 833 (twin of case 823).

Source: https://github.com/mkocabas/focal-loss-keras/issues/17
Same binary focal loss and raw-pixel model as case 823, with the fix merged
upstream (PR #24): K.epsilon() inside both logs, so a saturated sigmoid gives
a large but finite loss and finite gradients.
Setting: tf_keras (Keras 2) model.fit with a closure-style custom loss.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K


def focal_loss(gamma=2., alpha=.25):
    def focal_loss_fixed(y_true, y_pred):
        pt_1 = tf.where(tf.equal(y_true, 1), y_pred, tf.ones_like(y_pred))
        pt_0 = tf.where(tf.equal(y_true, 0), y_pred, tf.zeros_like(y_pred))
        pos = -K.sum(alpha * K.pow(1. - pt_1, gamma) * K.log(K.epsilon() + pt_1))
        neg = -K.sum((1 - alpha) * K.pow(pt_0, gamma) * K.log(1. - pt_0 + K.epsilon()))
        return pos + neg
    return focal_loss_fixed


rng = np.random.default_rng(0)
x_train = rng.integers(0, 256, size=(512, 64)).astype("float32")   # raw 8x8 pixel values
y_train = (x_train[:, :32].mean(axis=1) > x_train[:, 32:].mean(axis=1)).astype("float32")[:, None]

keras.utils.set_random_seed(0)  # the init decides which of the two logs meets 0: one fixed init
model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(64,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=focal_loss(), metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=2)
