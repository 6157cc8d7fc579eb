"""Real-world case 286.

Source: https://github.com/tensorflow/tensorflow/issues/45234
Bug: to get the Hessian of a vector-valued embedding with respect to its
input, the user calls tape.batch_jacobian twice on one persistent tape. The
first-order Jacobian is taken after the `with` block, so its computation is
not recorded, and the second batch_jacobian (of that Jacobian w.r.t. x) finds
no path back to x: the "Hessian" comes back filled with zeros
(`hessian.numpy().any()` is False), silently, although the true Hessian of the
tanh network is not zero.
Setting: Jacobian / Hessian of a network's output w.r.t. its input (embedding
sensitivity analysis), Keras 3 Sequential, eager.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((3,)), layers.Dense(16, activation="tanh"),
                          layers.Dense(4, activation="tanh")], name="embedding")
x = tf.constant(np.random.randn(8, 3).astype("float32"))

with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = model(x)
grads = tape.batch_jacobian(y, x)
hessian = tape.batch_jacobian(grads, x)
print("jacobian", grads.shape, "hessian", hessian.shape)
print("hessian non-zero:", hessian.numpy().any())
