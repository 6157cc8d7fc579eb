"""Real-world case 1043.

Source: https://stackoverflow.com/questions/48951109
Bug: a hand-written binary cross-entropy `-(y*log(p) + (1-y)*log(1-p))` on a
sigmoid output. The features are raw (not standardised), the logits are in
the hundreds, and float32 sigmoid returns exactly 0.0 or 1.0, so log(0) is
-inf and the loss is NaN/inf from the very first batch.
Setting: tf_keras (Keras 2) Sequential + custom loss in compile() + fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K


def my_custom_loss(y_true, y_pred):
    t_loss = (-1) * (y_true * K.log(y_pred) + (1 - y_true) * K.log(1 - y_pred))
    return K.mean(t_loss)


rng = np.random.default_rng(0)
# raw sensor readings in the hundreds, never standardised
x = rng.normal(300.0, 120.0, size=(256, 20)).astype("float32")
y = (x[:, :5].sum(axis=1) > 1500).astype("float32").reshape(-1, 1)

model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(20,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=my_custom_loss)
model.fit(x, y, epochs=2, batch_size=32, verbose=2)
