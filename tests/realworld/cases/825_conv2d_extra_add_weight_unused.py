"""Real-world case 825.

Source: https://github.com/keras-team/keras/issues/18893
Bug: to use their own kernel, the user calls add_weight(name="kernelA") on a
keras.layers.Conv2D before it is built. Conv2D still creates and uses its own
`kernel` in build()/call(); `kernelA` is a trainable weight of the layer that
the forward pass never reads, so model.fit warns that gradients do not exist
for it and it never trains.
Setting: Keras 3 functional model + model.fit, layer weights added by hand.
"""
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.normal(size=(128, 10, 10, 3)).astype("float32")
y_train = rng.integers(0, 4, size=(128,))

conv = layers.Conv2D(8, 3, activation="relu", kernel_initializer="glorot_uniform", name="conv")
conv.add_weight(shape=(3, 3, 3, 8), initializer="glorot_uniform", name="kernelA", trainable=True)

inputs = keras.Input(shape=(10, 10, 3))
h = conv(inputs)
h = layers.GlobalAveragePooling2D()(h)
outputs = layers.Dense(4, activation="softmax")(h)
model = keras.Model(inputs, outputs, name="small_cnn")
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=2)
