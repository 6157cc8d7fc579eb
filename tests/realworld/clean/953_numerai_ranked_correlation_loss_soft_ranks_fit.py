"""Clean control 953 (expected clean).

Look-alike of case 553: the ranked-correlation loss uses differentiable soft
ranks (for each prediction, the sum of sigmoids of its pairwise differences
with the batch) instead of integer argsort ranks, so the correlation of the
ranks with the targets has a gradient.
Setting: Sequential regressor, model.compile(loss=custom function) +
model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
NUM_FEATURES = 50


def corrcoef(x, y):
    mx = tf.math.reduce_mean(x)
    my = tf.math.reduce_mean(y)
    xm, ym = x - mx, y - my
    r_num = tf.math.reduce_sum(xm * ym)
    r_den = tf.norm(xm) * tf.norm(ym)
    return r_num / (r_den + keras.config.epsilon())


def ranked_correlation_loss(y_true, y_pred):
    targets = tf.reshape(y_true, [-1])
    predictions = tf.reshape(y_pred, [-1])
    pairwise = predictions[:, None] - predictions[None, :]
    ranked_preds = tf.reduce_sum(tf.sigmoid(pairwise / 0.01), axis=1)
    return -corrcoef(ranked_preds, targets)


model = keras.Sequential([
    keras.Input(shape=(NUM_FEATURES,)),
    layers.Dense(64, activation="relu"),
    layers.Dropout(0.1),
    layers.Dense(16, activation="relu"),
    layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=ranked_correlation_loss)

rng = np.random.default_rng(0)
features = rng.integers(0, 5, size=(1024, NUM_FEATURES)).astype("float32") / 4.0
signal = features[:, :5].mean(axis=1) + 0.5 * rng.normal(size=1024)
targets = (np.digitize(signal, np.quantile(signal, [0.2, 0.4, 0.6, 0.8])) / 4.0).astype("float32")
history = model.fit(features, targets, batch_size=128, epochs=4, verbose=0)
print("loss:", history.history["loss"])
