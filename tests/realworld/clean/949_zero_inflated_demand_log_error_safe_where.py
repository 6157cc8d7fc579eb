"""Clean control 949 (expected clean).

Look-alike of case 549: the zero-inflated demand loss with the log's input
made safe in the unselected rows (y_true replaced by 1 where nothing was
sold) before tf.where picks the branch, the pattern the tf.where
documentation recommends, so no inf/NaN reaches the gradient.
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
    safe_true = tf.where(sold, y_true, tf.ones_like(y_true))
    per_day = tf.where(sold, tf.square(tf.math.log(y_pred) - tf.math.log(safe_true)), tf.square(y_pred))
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
