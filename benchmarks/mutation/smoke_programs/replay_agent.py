# ruff: noqa: B905
"""Our own multi-phase smoke program: an RL-like agent that stores transitions and starts
learning only once its replay buffer holds enough (the first iterations do no update), with
a Q-learning update every iteration after that and a policy (actor) update plus a
target-network copy every fourth iteration."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(11)
n_actions, warmup, batch = 2, 6, 8
q_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(n_actions)])
target_net = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(n_actions)]
)
target_net.set_weights(q_net.get_weights())
actor = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(n_actions, activation="softmax")]
)
q_opt = keras.optimizers.Adam(1e-3)
actor_opt = keras.optimizers.Adam(1e-3)
buffer = []

for it in range(12):
    state = rng.normal(size=(4,)).astype("float32")
    buffer.append((state, it % n_actions, float(rng.normal()), rng.normal(size=(4,)).astype("float32")))
    if len(buffer) < warmup:
        continue  # no update until the buffer has filled
    idx = rng.integers(0, len(buffer), size=batch)
    states = np.stack([buffer[i][0] for i in idx])
    actions = np.array([buffer[i][1] for i in idx])
    rewards = np.array([buffer[i][2] for i in idx], dtype="float32")
    next_states = np.stack([buffer[i][3] for i in idx])
    with tf.GradientTape() as tape:
        q_values = q_net(states)
        q_taken = tf.reduce_sum(q_values * tf.one_hot(actions, n_actions), axis=1)
        next_q = target_net(next_states)
        target = tf.stop_gradient(rewards + 0.9 * tf.reduce_max(next_q, axis=1))
        td_loss = tf.reduce_mean(tf.square(target - q_taken))
    grads = tape.gradient(td_loss, q_net.trainable_variables)
    q_opt.apply_gradients(zip(grads, q_net.trainable_variables))
    if it % 4 == 3:  # the slower policy update, and the target network's copy
        with tf.GradientTape() as actor_tape:
            probs = actor(states)
            critic_q = q_net(states)
            expected_q = tf.reduce_sum(probs * tf.stop_gradient(critic_q), axis=1)
            entropy = -tf.reduce_sum(probs * tf.math.log(probs + 1e-8), axis=1)
            actor_loss = -tf.reduce_mean(expected_q + 0.01 * entropy)
        actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
        actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))
        target_net.set_weights(q_net.get_weights())
