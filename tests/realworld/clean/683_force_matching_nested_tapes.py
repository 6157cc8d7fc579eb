"""Clean control 683 (look-alike of case 283).

Source: https://github.com/tensorflow/tensorflow/issues/41510
Fix: two nested tapes: the inner one watches x and records the forward pass,
its gradient dE/dx is taken inside the outer tape's block, and the force loss
is computed there too, so the outer tape records the derivative computation and
gives every weight a gradient (the output layer has no bias, which the forces
could not depend on).
Setting: force matching / Sobolev training, Keras 3 Sequential, eager custom
training loop with nested tapes.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
N = 64
x_np = np.random.uniform(-2.0, 2.0, size=(N, 2)).astype("float32")
forces_np = (-2.0 * x_np).astype("float32")  # forces of the harmonic potential E = |x|^2

potential = keras.Sequential([keras.Input((2,)),
                              layers.Dense(32, activation="tanh", name="hidden1"),
                              layers.Dense(32, activation="tanh", name="hidden2"),
                              layers.Dense(1, use_bias=False, name="energy")], name="potential")
optimizer = keras.optimizers.Adam(1e-3)

for step in range(3):
    x = tf.constant(x_np)
    with tf.GradientTape() as tape:
        with tf.GradientTape() as inner:
            inner.watch(x)
            energy = potential(x, training=True)
        forces = -inner.gradient(energy, x)
        loss = tf.reduce_mean(tf.square(forces - forces_np))
    grads = tape.gradient(loss, potential.trainable_variables)
    optimizer.apply_gradients(zip(grads, potential.trainable_variables))
    print(step, float(loss))
