"""Clean control 615 (expected clean).

The Lambda output layer computes a soft-argmax (the softmax-weighted expected
index over the last axis) instead of tf.math.argmax, so the predicted index is
differentiable and the Dense layer trains.
Setting: Keras 3 functional model with a Lambda output layer, MAE loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras.layers import Dense, Input, Lambda
from keras.models import Model
from keras.optimizers import SGD

keras.utils.set_random_seed(0)


def SoftArgMax():
    return Lambda(lambda q: tf.reduce_sum(tf.nn.softmax(q, axis=2) * tf.range(3, dtype=q.dtype), axis=2))


inputs1 = Input(shape=(1, 1))
d = Dense(3)(inputs1)
out = SoftArgMax()(d)

model = Model(inputs=[inputs1], outputs=[out], name="test")
model.compile(SGD(0.1), loss="mae")
model.fit(x=[np.ones((100, 1, 1))], y=[np.zeros((100, 1))], batch_size=100, verbose=0, epochs=1)
print("trained without gradient warnings")
