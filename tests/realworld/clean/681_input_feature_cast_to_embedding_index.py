"""Clean control 681 (look-alike of case 281).

Source: https://github.com/keras-team/tf-keras/issues/826
The same two-branch model, but the Embedding indices come from the input
features themselves (Rescaling to (0, 10), tf.cast to int32, clip) rather
than from a trainable Dense layer, so nothing trainable sits in front of the
integer cast and every variable gets a gradient.
Setting: Keras 3 functional model with two branches joined by concatenate,
preprocessing (Rescaling) inside the model, compile + model.fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras.layers import Dense, Embedding, Flatten, Input, Lambda, Rescaling, concatenate
from keras.models import Model

keras.utils.set_random_seed(0)
num_indices = 10
embedding_dim = 5
p = 5

input_layer = Input(shape=(p,), name="input_layer")
# need to rescale the inputs to interval (0, 10) before integer cast
embedding_branch = Rescaling(5, 5, name="rescaling")(input_layer)
embedding_branch = Lambda(lambda x: tf.clip_by_value(tf.cast(x, tf.int32), 0, num_indices - 1))(embedding_branch)
embedding_branch = Embedding(input_dim=num_indices, output_dim=embedding_dim, name="embedding")(embedding_branch)
embedding_branch = Flatten()(embedding_branch)
embedding_branch = Dense(3, activation="relu")(embedding_branch)

dense_branch = Dense(20, activation="relu")(input_layer)
dense_branch = Dense(3, activation="relu")(dense_branch)

final_layer = concatenate([dense_branch, embedding_branch], name="concatenate_layer")
final_out = Dense(1, activation="linear")(final_layer)
model = Model(inputs=input_layer, outputs=final_out)
model.compile(optimizer="adam", loss="mse")

X = np.random.uniform(-1, 1, (64, p)).astype("float32")
y = np.random.rand(64, 1).astype("float32")
model.fit(X, y, batch_size=16, epochs=1, verbose=0)
