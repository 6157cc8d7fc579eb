"""Clean control 800 (look-alike of case 400).

Source: https://github.com/tensorflow/tensorflow/issues/27660
The same saliency computation with the forward pass inside the tape block
(the reporter's fix): the watched input gets its gradient.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
inputs = tf.convert_to_tensor(np.random.rand(4, 6).astype("float32"))


def score(x):
    return tf.reduce_sum(model(x))


with tf.GradientTape() as t:
    t.watch(inputs)
    s = score(inputs)
saliency = t.gradient(s, inputs)
print("saliency:", saliency.shape)
