"""Real-world case 574.

Source: https://github.com/keras-team/keras/issues/167
Bug: a "pull the lever or not" reinforcement-style model (discrete action 0/1)
is trained with a custom reward loss that turns the score into a hard decision
with (sign(y_pred) + 1) / 2 and maximises decision * reward. sign() is
piecewise constant: its gradient is zero everywhere, so every weight gets an
all-zero gradient, the loss value never changes and the model never learns
(the user saw "ugly gradients" and no improvement over a plain regression).
Setting: custom loss passed to model.compile(), model.fit(), Keras 3 Sequential.
"""
import numpy as np
import keras
from keras import layers, ops


def slot_reward(y_true, y_pred):
    y_pred = (ops.sign(y_pred) + 1) / 2
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
history = model.fit(states, rewards, batch_size=64, epochs=3, verbose=0)
print("loss per epoch:", history.history["loss"])
