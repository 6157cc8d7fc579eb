"""Real-world case 416.

Source: https://github.com/tensorflow/tensorflow/issues/41510
Bug: a mixed second derivative through one persistent tape. In the thread the
first `tape.gradient(w, y)` is dedented out of the `with` block, and then "the
first gradient operation is not in the tape ... the answer is correctly None".
Here an input-gradient penalty (double backprop): the input gradient and the
penalty are computed after the block closes, so the penalty has no recorded
path to the weights and tape.gradient returns None for all of them.
Setting: Keras 3 Sequential classifier, eager, persistent GradientTape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1, use_bias=False)])
x = tf.convert_to_tensor(np.random.randn(16, 5).astype("float32"))

with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    out = tf.reduce_sum(model(x))

input_grad = tape.gradient(out, x)
penalty = tf.reduce_mean(tf.reduce_sum(tf.square(input_grad), axis=1))
grads = tape.gradient(penalty, model.trainable_variables)
print("penalty", float(penalty), "grads:", grads)
