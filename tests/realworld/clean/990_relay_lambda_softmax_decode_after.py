"""Clean control 990 (expected clean).

Source: https://github.com/keras-team/keras/issues/9169 (fixed form)
The Lambda layer returns the softmax probabilities during training (the
categorical cross-entropy needs them); the hard decision one_hot(argmax) is
taken on the predictions only after training, outside the loss.
Setting: functional Keras 3 model with a Lambda layer (keras.ops), compile()
+ fit().
"""
import numpy as np
import keras
from keras import layers, ops

M = 16


def decodeSignal(x):
    return ops.softmax(x)


def hard_decision(probs):
    return np.eye(M)[np.argmax(probs, axis=-1)]


input_layer = keras.Input(shape=(M,))
relay = layers.Dense(M, activation="relu")(input_layer)
relay = layers.Dense(M)(relay)
relay_softmax = layers.Lambda(decodeSignal, output_shape=(M,))(relay)

model = keras.Model(input_layer, relay_softmax)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="categorical_crossentropy")

symbols = np.random.randint(0, M, size=1024)
onehot_symbols = keras.utils.to_categorical(symbols, M).astype("float32")
model.fit(onehot_symbols, onehot_symbols, epochs=2, batch_size=64, shuffle=True, verbose=0)
detected = hard_decision(model.predict(onehot_symbols[:8], verbose=0))
