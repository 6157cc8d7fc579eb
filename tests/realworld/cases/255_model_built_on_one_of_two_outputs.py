"""Real-world case 255.

Source: https://github.com/tensorflow/tensorflow/issues/22775
Bug: a network has two outputs from two parallel convolutions; a second
model that is "just a part" of it uses only the first output, but it still
owns the second convolution, whose kernel and bias get no gradient (old
Keras raised "An operation has `None` for gradient").
Setting: Keras 3 functional models (a multi-output network nested in a
single-output model), model.fit.
"""
import keras
import numpy as np
from keras.layers import Conv2D, Dense, Flatten

keras.utils.set_random_seed(0)


def get_test0_net():
    data_input = keras.Input(shape=(4, 4, 3))
    x0 = Conv2D(3, 3, padding="same")(data_input)
    x1 = Conv2D(3, 3, padding="same")(data_input)
    return keras.Model(data_input, [x0, x1])


net0 = get_test0_net()
data_input = keras.Input(shape=(4, 4, 3))
x0 = net0(data_input)[0]
out = Dense(1)(Flatten()(x0))
model1 = keras.Model(data_input, out)
model1.compile(optimizer="sgd", loss="mse")
model1.fit(np.random.rand(16, 4, 4, 3).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=1, verbose=0)
