"""Real-world control 1067 (twin of case 1047).

Source: https://github.com/keras-team/keras/issues/13502
Fixed: the feature-extractor layers are frozen with `trainable = False`
instead of a stop_gradient Lambda, so only the head's variables are asked for
gradients and all of them get one.
Setting: Keras 3 functional model, frozen layers, compile() + fit().
"""
import numpy as np
import keras
from keras import layers

num_samples = 32
inp = layers.Input(shape=(10, 10, 3))
x = layers.Conv2D(8, 3, activation="relu", name="feat_conv1", trainable=False)(inp)
x = layers.Conv2D(8, 3, activation="relu", name="feat_conv2", trainable=False)(x)
x = layers.Flatten()(x)
x = layers.Dense(16, activation="relu", name="head_fc")(x)
out = layers.Dense(2, name="head_out")(x)

model = keras.Model(inp, out)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(num_samples, 10, 10, 3), np.random.rand(num_samples, 2),
          batch_size=8, epochs=2, verbose=2)
