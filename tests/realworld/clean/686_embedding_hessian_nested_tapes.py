"""Clean control 686 (look-alike of case 286).

Source: https://github.com/tensorflow/tensorflow/issues/45234
Fix: the workaround from the thread: nested tapes. The inner tape records the
forward pass and its batch_jacobian is taken inside the outer tape's block, so
the outer tape records the Jacobian computation and its batch_jacobian w.r.t.
x is the (non-zero) Hessian.
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
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = model(x)
    grads = inner.batch_jacobian(y, x)
hessian = tape.batch_jacobian(grads, x)
print("jacobian", grads.shape, "hessian", hessian.shape)
print("hessian non-zero:", hessian.numpy().any())
