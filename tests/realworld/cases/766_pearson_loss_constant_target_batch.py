"""Real-world case 766.

Source: https://github.com/WenYanger/Keras_Metrics/pull/1
Bug: the model is trained with 1 - Pearson r as its loss, r = sum(xm * ym) /
sqrt(sum(xm^2) * sum(ym^2)) with no smoothing term.  The daily sales table is
fed in date order and the store was closed for its first weeks, so the first
batch's targets are all 0: sum(xm^2) is 0, the denominator is 0 and 0 / 0
makes the loss NaN from the first step.
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
    r = r_num / r_den
    return ops.mean(r)


def pearson_loss(y_true, y_pred):
    return 1.0 - pearson_r(y_true, y_pred)


model = keras.Sequential([
    keras.Input(shape=(8,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, use_bias=False),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=pearson_loss)

train_ds = tf.data.Dataset.from_tensor_slices((X, y)).batch(64)
history = model.fit(train_ds, epochs=2, verbose=0)
print("loss per epoch:", history.history["loss"])
