"""Clean control 655 (look-alike of case 255).

Source: https://github.com/tensorflow/tensorflow/issues/22775
The same two-output network nested in a model that uses only its first
output, with the unused branch frozen (trainable=False), so every trainable
variable of the part-model is on the loss path.
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
    x1 = Conv2D(3, 3, padding="same", trainable=False)(data_input)
    return keras.Model(data_input, [x0, x1])


net0 = get_test0_net()
data_input = keras.Input(shape=(4, 4, 3))
x0 = net0(data_input)[0]
out = Dense(1)(Flatten()(x0))
model1 = keras.Model(data_input, out)
model1.compile(optimizer="sgd", loss="mse")
model1.fit(np.random.rand(16, 4, 4, 3).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=1, verbose=0)
