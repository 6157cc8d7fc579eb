"""Real-world case 343.

Source: https://github.com/philtabor/Youtube-Code-Repository/issues/41
Bug: the one-step TD target r + gamma * V(s') is taken from the same forward pass over the
trajectory (values[1:]) as the prediction (values[:-1]), inside the tape and not stopped, so
"grad(V(S', w)) appears in the update for w".
Setting: Keras 3 Sequential critic over a rollout of T+1 states, eager tape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(1e-2)
states = np.random.rand(21, 3).astype("float32")
rewards = np.random.rand(20).astype("float32")
gamma = 0.99

with tf.GradientTape() as tape:
    values = tf.squeeze(critic(states), axis=1)
    td_target = rewards + gamma * values[1:]
    loss = tf.reduce_mean(tf.square(td_target - values[:-1]))
grads = tape.gradient(loss, critic.trainable_variables)
optimizer.apply_gradients(zip(grads, critic.trainable_variables))
