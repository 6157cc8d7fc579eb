"""Real-world case 514.

Source: https://github.com/tensorflow/tensorflow/issues/36596
Bug: as in the report ("I was using a custom loss function which converted the
predicted values to numpy arrays"), a valence/arousal regressor overrides
Keras 3's Model.compute_loss and scores the batch with a NumPy concordance
correlation coefficient: y_pred leaves TensorFlow through
keras.ops.convert_to_numpy (run_eagerly=True so that this works at all) and
the loss comes back as a fresh constant tensor. The tape sees no path from the
weights to the loss, and fit() raises "No gradients provided for any
variable."
Setting: Keras 3 functional model of a keras.Model subclass overriding
compute_loss, custom NumPy loss, fit(run_eagerly=True).
"""
import numpy as np
import keras
from keras import layers, ops


def concordance_cc(y_true, y_pred):
    mean_t, mean_p = y_true.mean(axis=0), y_pred.mean(axis=0)
    var_t, var_p = y_true.var(axis=0), y_pred.var(axis=0)
    cov = ((y_true - mean_t) * (y_pred - mean_p)).mean(axis=0)
    return 2.0 * cov / (var_t + var_p + (mean_t - mean_p) ** 2)


class EmotionRegressor(keras.Model):
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        pred = ops.convert_to_numpy(y_pred)
        true = ops.convert_to_numpy(y)
        ccc = concordance_cc(true, pred)
        return ops.convert_to_tensor(1.0 - ccc.mean(), dtype="float32")


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
