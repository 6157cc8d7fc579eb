"""Real-world case 281.

Source: https://github.com/keras-team/tf-keras/issues/826
Bug: one branch of a two-branch model turns a Dense(tanh) output into
Embedding indices: Rescaling to (0, 10), then a Lambda with
tf.cast(x, tf.int32) and a clip; the integer cast has no gradient, so the
Dense layer in front of it never trains and fit warns "Gradients do not
exist for variables ['dense/kernel', 'dense/bias']" (the Embedding and the
other branch still train).
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
embedding_branch = Dense(num_indices, activation="tanh")(input_layer)
# need to rescale output to interval (0, 10) before integer cast
embedding_branch = Rescaling(5, 5, name="rescaling")(embedding_branch)
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
