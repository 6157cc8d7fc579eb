"""Real-world case 549.

Source: https://github.com/tensorflow/tensorflow/issues/38349
Bug: a demand-forecasting loss uses the squared log error for days with
sales and the plain squared error for days without, selected with tf.where.
For the zero-sales rows the unselected branch is log(0) = -inf; the loss is
finite (tf.where picks the other branch), but the gradient of the inactive
branch is inf and tf.where's gradient multiplies it by 0, giving NaN: every
weight's gradient is NaN and the model is NaN after the first update.
Setting: functional regressor, model.compile(loss=custom function) +
model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)


def zero_inflated_log_loss(y_true, y_pred):
    sold = y_true > 0
    per_day = tf.where(sold, tf.square(tf.math.log(y_pred) - tf.math.log(y_true)), tf.square(y_pred))
    return tf.reduce_mean(per_day, axis=-1)


store = keras.Input(shape=(12,), name="store_features")
x = layers.Dense(32, activation="relu")(store)
x = layers.Dense(32, activation="relu")(x)
demand = layers.Dense(7, activation="softplus", name="weekly_demand")(x)
model = keras.Model(store, demand)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=zero_inflated_log_loss)

rng = np.random.default_rng(0)
features = rng.normal(size=(256, 12)).astype("float32")
open_days = rng.uniform(size=(256, 7)) < 0.7
sales = np.where(open_days, rng.poisson(20.0, size=(256, 7)), 0).astype("float32")
history = model.fit(features, sales, batch_size=32, epochs=2, verbose=0)
print("loss:", history.history["loss"])
