"""Real-world case 560.

Source: https://github.com/tensorflow/tensorflow/issues/41510
Bug: second-order training with nested tapes. A neural potential E(x) is
trained by force matching, F = -dE/dx, so the loss needs the gradient of a
gradient. The inner tape.gradient that turns energies into forces is written
after the outer `with` block (the indentation discussed in the thread: "the
first gradient operation is not in the tape, and therefore the answer is
correctly None"): the outer tape never records the force computation, the
loss is not connected to the weights and no variable gets a gradient.
Setting: second-order / physics-informed loss, tf.function custom step, nested GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

n_atoms = 5
potential = keras.Sequential(
    [
        keras.Input(shape=(n_atoms * 3,)),
        layers.Dense(64, activation="tanh", name="hidden_1"),
        layers.Dense(64, activation="tanh", name="hidden_2"),
        layers.Dense(1, use_bias=False, name="energy"),
    ],
    name="potential",
)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

rng = np.random.default_rng(0)
positions = rng.normal(size=(64, n_atoms * 3)).astype("float32")
forces_ref = (-2.0 * positions + 0.1 * rng.normal(size=positions.shape)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((positions, forces_ref)).batch(16)


@tf.function
def train_step(x, f_true):
    with tf.GradientTape() as tape:
        with tf.GradientTape() as tape_x:
            tape_x.watch(x)
            energy = potential(x, training=True)
    forces = -tape_x.gradient(energy, x)
    loss = tf.reduce_mean(tf.square(forces - f_true))
    grads = tape.gradient(loss, potential.trainable_variables)
    optimizer.apply_gradients(zip(grads, potential.trainable_variables))
    return loss


for epoch in range(3):
    for x, f_true in dataset:
        loss = train_step(x, f_true)
    print("epoch", epoch, "force loss", float(loss))
