"""Real-world case 590.

Source: https://github.com/keras-team/keras/issues/9169
Bug: the relay autoencoder decodes the received signal inside a Lambda layer
by taking the softmax and then one_hot(argmax(...)) so that the model output
is the detected symbol. argmax returns an integer index with no gradient, so
the categorical cross-entropy on the one-hot output sends nothing back to the
relay layers and Keras raises "No gradients provided for any variable".
Setting: functional Keras 3 model with a Lambda layer (keras.ops), compile()
+ fit().
"""
import numpy as np
import keras
from keras import layers, ops

M = 16


def decodeSignal(x):
    x = ops.softmax(x)
    Y = ops.one_hot(ops.argmax(x, axis=-1), M)
    return Y


input_layer = keras.Input(shape=(M,))
relay = layers.Dense(M, activation="relu")(input_layer)
relay = layers.Dense(M)(relay)
relay_softmax = layers.Lambda(decodeSignal, output_shape=(M,))(relay)

model = keras.Model(input_layer, relay_softmax)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="categorical_crossentropy")

symbols = np.random.randint(0, M, size=1024)
onehot_symbols = keras.utils.to_categorical(symbols, M).astype("float32")
model.fit(onehot_symbols, onehot_symbols, epochs=2, batch_size=64, shuffle=True, verbose=0)
