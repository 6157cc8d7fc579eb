"""Real-world control 835 (twin of case 825).

Source: https://github.com/keras-team/keras/issues/18893
Same small CNN as case 825, with the user's own kernel handed to Conv2D the
way the layer supports it: as its kernel_initializer, so the custom values
are the kernel the convolution reads and trains.
Setting: Keras 3 functional model + model.fit.
"""
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.normal(size=(128, 10, 10, 3)).astype("float32")
y_train = rng.integers(0, 4, size=(128,))

kernel_a = keras.initializers.GlorotUniform(seed=1)(shape=(3, 3, 3, 8))
conv = layers.Conv2D(8, 3, activation="relu", kernel_initializer=keras.initializers.Constant(kernel_a), name="conv")

inputs = keras.Input(shape=(10, 10, 3))
h = conv(inputs)
h = layers.GlobalAveragePooling2D()(h)
outputs = layers.Dense(4, activation="softmax")(h)
model = keras.Model(inputs, outputs, name="small_cnn")
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=2)
