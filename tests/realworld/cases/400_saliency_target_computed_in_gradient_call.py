"""Real-world case 400.

Source: https://github.com/tensorflow/tensorflow/issues/27660
Bug: the target is computed inside the `t.gradient(...)` call, after the
`with tf.GradientTape()` block has already closed (the reporter wrote
`t.gradient(f(x), x)` with the forward pass commented out of the block). The
forward pass is not recorded, so the gradient w.r.t. the watched input is None
("of course, this isn't a bug at all! it's a scoping problem").
Setting: input saliency of a Keras 3 Sequential regressor, eager.
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
saliency = t.gradient(score(inputs), inputs)
print("saliency:", saliency)
