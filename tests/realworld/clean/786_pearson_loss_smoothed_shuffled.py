"""Clean control 786 (expected clean).

Twin of case 766 (https://github.com/WenYanger/Keras_Metrics/pull/1): the
Pearson loss gets the PR's smoothing term in its denominator and the daily
table is shuffled before batching, so no batch has an all-constant target.
The table still has a survey-score column full of NaN, but the model reads
only the eight feature columns: no NaN reaches the loss.
Setting: Keras 3 Sequential, compile(loss=custom) + fit on an unshuffled tf.data pipeline.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import ops

rng = np.random.default_rng(0)
n_days = 512
table = np.zeros((n_days, 10), dtype="float32")
table[:, :8] = rng.normal(size=(n_days, 8))
sales = table[:, :8] @ rng.normal(size=8) + 5.0
sales[:64] = 0.0  # store closed: no sales during the first weeks
table[:, 8] = sales
table[:, 9] = rng.normal(size=n_days)
table[rng.random(n_days) < 0.3, 9] = np.nan  # optional customer survey score, often missing

feature_columns = list(range(8))
target_column = 8
X = table[:, feature_columns]
y = table[:, target_column:target_column + 1]


def pearson_r(y_true, y_pred):
    x = y_true
    yp = y_pred
    mx = ops.mean(x, axis=0)
    my = ops.mean(yp, axis=0)
    xm, ym = x - mx, yp - my
    r_num = ops.sum(xm * ym)
    x_square_sum = ops.sum(xm * xm)
    y_square_sum = ops.sum(ym * ym)
    r_den = ops.sqrt(x_square_sum * y_square_sum)
    r = r_num / (r_den + keras.backend.epsilon())
    return ops.mean(r)


def pearson_loss(y_true, y_pred):
    return 1.0 - pearson_r(y_true, y_pred)


model = keras.Sequential([
    keras.Input(shape=(8,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, use_bias=False),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=pearson_loss)

train_ds = tf.data.Dataset.from_tensor_slices((X, y)).shuffle(n_days, seed=0).batch(64)
history = model.fit(train_ds, epochs=5, verbose=0)
print("loss per epoch:", history.history["loss"])
