"""Real-world case 215.

Source: https://github.com/Mainak431/List-of-Differentiable--OPs-and-Non-differentiable-OPs--in-Tensorflow/issues/4
Bug: a model's output layer is a Lambda that returns tf.math.argmax of the
Dense outputs (the user expected ArgMax to be differentiable because a list
said so); argmax returns integer indices whose gradient is None, so fit()
fails with "No gradients provided for any variable".
Setting: Keras 3 functional model with a Lambda output layer, MAE loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras.layers import Dense, Input, Lambda
from keras.models import Model
from keras.optimizers import SGD

keras.utils.set_random_seed(0)


def ArgMax():
    return Lambda(lambda q: tf.math.argmax(q, 2))


inputs1 = Input(shape=(1, 1))
d = Dense(3)(inputs1)
out = ArgMax()(d)

model = Model(inputs=[inputs1], outputs=[out], name="test")
model.compile(SGD(0.1), loss="mae")
model.fit(x=[np.ones((100, 1, 1))], y=[np.zeros((100, 1))], batch_size=100, verbose=0, epochs=1)
