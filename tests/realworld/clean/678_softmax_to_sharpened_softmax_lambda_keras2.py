"""Clean control 678 (look-alike of case 278).

Source: https://github.com/keras-team/keras/issues/5537
The same caption generator whose Lambda output layer makes the softmax
"nearly one-hot" with a temperature-sharpened softmax of its log instead of
an equality test with the maximum, so the output stays differentiable and
the LSTM and the TimeDistributed Dense are trained.
Setting: Keras 2 (tf_keras) Sequential LSTM model, tf.keras.backend
functions in a Lambda output layer, categorical_crossentropy,
model.train_on_batch.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K
from tf_keras.layers import LSTM, Dense, Dropout, Lambda, TimeDistributed

tf.random.set_seed(0)
MAX_SEQUENCE_LENGTH, NOISE_SIZE, NB_WORDS = 6, 8, 12


def softmax_to_onehot(t):
    return K.softmax(K.log(t + K.epsilon()) / 0.2, axis=2)


def output_shape_lambda(input_shape):
    return input_shape


def model():
    model = keras.Sequential()
    model.add(LSTM(32, input_shape=(MAX_SEQUENCE_LENGTH, NOISE_SIZE), return_sequences=True))
    model.add(Dropout(0.2))
    model.add(TimeDistributed(Dense(NB_WORDS, activation="softmax")))
    model.add(Lambda(softmax_to_onehot, output_shape=output_shape_lambda))
    return model


g = model()
g.compile(loss="categorical_crossentropy", optimizer="adam")
g_input_noise_batch = np.random.rand(16, MAX_SEQUENCE_LENGTH, NOISE_SIZE).astype("float32")
one_hot_caption_batch = np.eye(NB_WORDS, dtype="float32")[np.random.randint(0, NB_WORDS, (16, MAX_SEQUENCE_LENGTH))]
loss = g.train_on_batch(g_input_noise_batch, one_hot_caption_batch)
print("loss:", loss)
