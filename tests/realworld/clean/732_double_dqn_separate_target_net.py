"""Clean control 732 (look-alike of case 332).

Source: https://github.com/datawhalechina/easy-rl/pull/117
The same Double DQN with a separate target network (a copy, never trained): the TD target
comes from variables the tape is not asked about, so no gradient flows through it.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
n_states, n_actions, gamma = 4, 2, 0.99


def make_q_network():
    return keras.Sequential(
        [keras.Input((n_states,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(n_actions)]
    )


policy_net = make_q_network()
target_net = make_q_network()
target_net.set_weights(policy_net.get_weights())
optimizer = keras.optimizers.Adam(1e-3)
huber = keras.losses.Huber()


@tf.function
def update(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        q_values = tf.gather(policy_net(states), actions, batch_dims=1)
        next_actions = tf.argmax(policy_net(next_states), axis=1)
        next_q = tf.gather(target_net(next_states), next_actions, batch_dims=1)
        expected_q = rewards + gamma * next_q * (1.0 - dones)
        loss = huber(expected_q, q_values)
    grads = tape.gradient(loss, policy_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy_net.trainable_variables))
    return loss


for step in range(3):
    update(
        np.random.randn(32, n_states).astype("float32"),
        np.random.randint(0, n_actions, size=32),
        np.random.rand(32).astype("float32"),
        np.random.randn(32, n_states).astype("float32"),
        (np.random.rand(32) < 0.1).astype("float32"),
    )
