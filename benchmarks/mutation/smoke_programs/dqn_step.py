# ruff: noqa: B007, B905
"""Our own smoke program: a double-DQN update whose TD target comes from the online network
under `tf.stop_gradient`, inside the tape, eager."""

import keras
import numpy as np
import tensorflow as tf

num_actions = 3
online = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(num_actions)]
)
target = keras.models.clone_model(online)
target.set_weights(online.get_weights())
optimizer = keras.optimizers.Adam(1e-3)
gamma = 0.99

rng = np.random.default_rng(3)
states = rng.normal(size=(32, 4)).astype("float32")
next_states = rng.normal(size=(32, 4)).astype("float32")
actions = rng.integers(0, num_actions, size=32)
rewards = rng.normal(size=32).astype("float32")
dones = (rng.uniform(size=32) < 0.1).astype("float32")

for it in range(3):
    with tf.GradientTape() as tape:
        q = online(states)
        next_online = online(next_states)
        best = tf.argmax(next_online, axis=1)
        next_q = tf.gather(target(next_states), best, batch_dims=1)
        td_target = tf.stop_gradient(
            rewards + gamma * (1.0 - dones) * next_q + 0.1 * tf.reduce_max(next_online, axis=1)
        )
        q_taken = tf.reduce_sum(q * tf.one_hot(actions, num_actions), axis=1)
        loss = tf.reduce_mean(keras.losses.huber(td_target[:, None], q_taken[:, None]))
    grads = tape.gradient(loss, online.trainable_variables)
    optimizer.apply_gradients(zip(grads, online.trainable_variables))
