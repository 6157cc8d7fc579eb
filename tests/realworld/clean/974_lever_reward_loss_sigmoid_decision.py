"""Clean control 974 (expected clean).

Look-alike of case 574: the lever-pulling reward loss uses a smooth decision,
sigmoid(5 * y_pred), instead of (sign(y_pred) + 1) / 2, so the expected
reward is differentiable and the model learns when to pull.
Setting: custom loss passed to model.compile(), model.fit(), Keras 3 Sequential.
"""
import numpy as np
import keras
from keras import layers, ops


def slot_reward(y_true, y_pred):
    y_pred = ops.sigmoid(5.0 * y_pred)
    return -ops.mean(y_pred * y_true)


rng = np.random.default_rng(0)
states = rng.normal(size=(256, 8)).astype("float32")
true_w = rng.normal(size=(8, 1)).astype("float32")
rewards = (states @ true_w + 0.1 * rng.normal(size=(256, 1))).astype("float32")

model = keras.Sequential([
    keras.Input((8,)),
    layers.Dense(16, activation="relu"),
    layers.Dense(1),
])
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=slot_reward)
history = model.fit(states, rewards, batch_size=64, epochs=20, verbose=0)
print("loss per epoch:", history.history["loss"])
