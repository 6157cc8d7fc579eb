"""Real-world case 1045.

Source: https://github.com/keras-team/keras/issues/12271
Bug: a driving model has a shared CNN trunk and one head per driving
scenario; the user trains the trunk with the "follow_lane" head and gives a
loss for that output only. The other two heads are still trainable but no
loss term uses them, so their kernels and biases get no gradient (Keras
warns "Gradients do not exist for variables").
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
model.compile(optimizer="adam", loss={"follow_lane": "mean_absolute_error"})

rng = np.random.default_rng(0)
images = rng.random((64, 48, 48, 3)).astype("float32")
steering = rng.uniform(-1, 1, size=(64, 1)).astype("float32")
model.fit(images, {"follow_lane": steering}, epochs=2, batch_size=16, verbose=2)
