"""Real-world control 1065 (twin of case 1045).

Source: https://github.com/keras-team/keras/issues/12271
Fixed: the heads that are not being trained in this phase are frozen
(`trainable = False`) before compile(), so every trainable variable is used
by the follow_lane loss.
Setting: Keras 3 functional multi-output model, compile() with a loss for one output, fit().
"""
import numpy as np
import keras
from keras import layers

inp = keras.Input(shape=(48, 48, 3), name="camera")
x = layers.Conv2D(8, 5, strides=2, activation="relu")(inp)
x = layers.Conv2D(16, 3, strides=2, activation="relu")(x)
x = layers.Flatten()(x)
common = layers.Dense(32, activation="relu", name="common_fc")(x)

outputs = {}
for scenario in ["follow_lane", "turn_left", "turn_right"]:
    h = layers.Dense(16, activation="relu", name=f"{scenario}_fc")(common)
    outputs[scenario] = layers.Dense(1, name=scenario)(h)

model = keras.Model(inp, outputs, name="driving_net")
for scenario in ["turn_left", "turn_right"]:
    model.get_layer(f"{scenario}_fc").trainable = False
    model.get_layer(scenario).trainable = False
model.compile(optimizer="adam", loss={"follow_lane": "mean_absolute_error"})

rng = np.random.default_rng(0)
images = rng.random((64, 48, 48, 3)).astype("float32")
steering = rng.uniform(-1, 1, size=(64, 1)).astype("float32")
model.fit(images, {"follow_lane": steering}, epochs=2, batch_size=16, verbose=2)
