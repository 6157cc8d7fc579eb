"""Clean control 947 (expected clean).

Look-alike of case 547: the many-to-many LSTM load regressor with the
features standardised before training and a linear TimeDistributed output
unit, so the output is not clamped at zero and every weight is trained.
Setting: Sequential LSTM model, model.compile(loss="mean_squared_error") +
model.fit (Keras 3).
"""
import numpy as np
import keras
from keras import layers

keras.utils.set_random_seed(2)
feat_num, timestep_num = 6, 25


def RNN_keras(feat_num, timestep_num=100):
    model = keras.Sequential()
    model.add(keras.Input(shape=(timestep_num, feat_num)))
    model.add(layers.LSTM(48, return_sequences=True))
    model.add(layers.LSTM(16, return_sequences=True))
    model.add(layers.TimeDistributed(layers.Dense(1)))
    sgd = keras.optimizers.SGD(learning_rate=0.01, momentum=0.99, nesterov=True)
    model.compile(loss="mean_squared_error", optimizer=sgd, metrics=["mean_squared_error"])
    return model


rng = np.random.default_rng(0)
load_kw = rng.uniform(800.0, 5000.0, size=(64, timestep_num, 1))
temperature = rng.uniform(-5.0, 35.0, size=(64, timestep_num, 1))
humidity = rng.uniform(0.2, 1.0, size=(64, timestep_num, 1))
hour = np.tile(np.arange(timestep_num) % 24, (64, 1))[..., None]
weekday = rng.integers(0, 7, size=(64, 1, 1)) * np.ones((1, timestep_num, 1))
holiday = rng.integers(0, 2, size=(64, 1, 1)) * np.ones((1, timestep_num, 1))
X_raw = np.concatenate([load_kw, temperature, humidity, hour, weekday, holiday], axis=2)
X_train = ((X_raw - X_raw.mean(axis=(0, 1))) / X_raw.std(axis=(0, 1))).astype("float32")
y_train = (0.001 * np.roll(load_kw, -1, axis=1) + rng.normal(0, 0.1, (64, timestep_num, 1))).astype("float32")

rnn = RNN_keras(feat_num, timestep_num)
history = rnn.fit(X_train, y_train, batch_size=64, epochs=3, verbose=0)
print("loss per epoch:", history.history["loss"])
print("max prediction:", float(rnn.predict(X_train, verbose=0).max()))
