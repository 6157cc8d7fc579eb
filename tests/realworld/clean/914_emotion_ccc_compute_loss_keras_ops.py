"""Real-world control 914 (fixed twin of case 514).

Source: https://github.com/tensorflow/tensorflow/issues/36596
Fix: the concordance correlation coefficient in the overridden compute_loss is
written with keras.ops on the y_pred tensor itself (no convert_to_numpy round
trip), so the loss stays connected to the regressor's weights.
Setting: Keras 3 functional model of a keras.Model subclass overriding
compute_loss, custom loss, fit(run_eagerly=True).
"""
import numpy as np
import keras
from keras import layers, ops


def concordance_cc(y_true, y_pred):
    mean_t, mean_p = ops.mean(y_true, axis=0), ops.mean(y_pred, axis=0)
    var_t, var_p = ops.var(y_true, axis=0), ops.var(y_pred, axis=0)
    cov = ops.mean((y_true - mean_t) * (y_pred - mean_p), axis=0)
    return 2.0 * cov / (var_t + var_p + (mean_t - mean_p) ** 2)


class EmotionRegressor(keras.Model):
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        true = ops.cast(y, y_pred.dtype)
        ccc = concordance_cc(true, y_pred)
        return 1.0 - ops.mean(ccc)


keras.utils.set_random_seed(0)
features = keras.Input(shape=(88,), name="egemaps")
h = layers.Dense(64, activation="relu", name="hidden")(features)
h = layers.Dropout(0.2, name="drop")(h)
outputs = layers.Dense(2, activation="tanh", name="valence_arousal")(h)
model = EmotionRegressor(features, outputs, name="emotion_regressor")
model.compile(optimizer=keras.optimizers.Adam(1e-3), run_eagerly=True)

rng = np.random.default_rng(0)
x = rng.normal(size=(128, 88)).astype("float32")
y = np.tanh(x[:, :2] + 0.3 * rng.normal(size=(128, 2))).astype("float32")
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
