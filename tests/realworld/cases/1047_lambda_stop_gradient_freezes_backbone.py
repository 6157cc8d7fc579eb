"""Real-world case 1047.

Source: https://github.com/keras-team/keras/issues/13502
Bug: to keep a feature extractor fixed, the user inserts a Lambda layer that
applies stop_gradient to its output. The convolution layers before it stay
trainable, so fit() asks for their gradients and gets None for every one
of them (Keras 3 warns "Gradients do not exist for variables").
Setting: Keras 3 functional model, Lambda(keras.ops.stop_gradient), compile() + fit().
"""
import numpy as np
import keras
from keras import layers, ops

num_samples = 32
inp = layers.Input(shape=(10, 10, 3))
x = layers.Conv2D(8, 3, activation="relu", name="feat_conv1")(inp)
x = layers.Conv2D(8, 3, activation="relu", name="feat_conv2")(x)
x = layers.Lambda(lambda t: ops.stop_gradient(t), name="stop_grad")(x)
x = layers.Flatten()(x)
x = layers.Dense(16, activation="relu", name="head_fc")(x)
out = layers.Dense(2, name="head_out")(x)

model = keras.Model(inp, out)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(num_samples, 10, 10, 3), np.random.rand(num_samples, 2),
          batch_size=8, epochs=2, verbose=2)
