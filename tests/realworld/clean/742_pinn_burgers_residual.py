"""Clean control 742 (expected clean).

A physics-informed network for Burgers' equation: the residual u_t + u * u_x - nu * u_xx is
built from the network's own derivatives (nested tapes) and driven to zero; there is no
target, and the gradient must flow through every term. The boundary data term compares u
with fixed values.
Setting: Keras 3 Sequential with tanh, nested eager tapes, custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(20, activation="tanh"),
                        keras.layers.Dense(20, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)
nu = 0.01 / np.pi
t = tf.constant(np.random.rand(64, 1).astype("float32"))
x = tf.constant(np.random.uniform(-1, 1, (64, 1)).astype("float32"))
xb = np.random.uniform(-1, 1, (16, 2)).astype("float32")
ub = -np.sin(np.pi * xb[:, 1:2]).astype("float32")

with tf.GradientTape() as tape:
    with tf.GradientTape(persistent=True) as inner:
        inner.watch([t, x])
        u = net(tf.concat([t, x], axis=1))
        u_x = inner.gradient(u, x)
    u_t = inner.gradient(u, t)
    u_xx = inner.gradient(u_x, x)
    residual = u_t + u * u_x - nu * u_xx
    loss = tf.reduce_mean(tf.square(residual)) + tf.reduce_mean(tf.square(net(xb) - ub))
grads = tape.gradient(loss, net.trainable_variables)
optimizer.apply_gradients(zip(grads, net.trainable_variables))
print("loss", float(loss))
