"""Real-world case 283.

Source: https://github.com/tensorflow/tensorflow/issues/41510
Bug: a network is trained through its derivative with respect to its input: a
learned potential E(x) whose negative gradient must match measured forces. One
persistent GradientTape records the forward pass; as in the thread (where the
derivative was moved out of the `with` block to get past "Tape is still
recording"), dE/dx and the loss are computed after the block. Those operations
are not recorded, so, exactly as the thread's own example shows (the first
derivative taken outside the tape, then its gradient w.r.t. the variable is
None), every weight gets None and apply_gradients raises "No gradients
provided for any variable".
Setting: force matching / Sobolev training, Keras 3 Sequential, eager custom
training loop with one persistent tape.
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
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        energy = potential(x, training=True)
    forces = -tape.gradient(energy, x)
    loss = tf.reduce_mean(tf.square(forces - forces_np))
    grads = tape.gradient(loss, potential.trainable_variables)
    del tape
    optimizer.apply_gradients(zip(grads, potential.trainable_variables))
    print(step, float(loss))
