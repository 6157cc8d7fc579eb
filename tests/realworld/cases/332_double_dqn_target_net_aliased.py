"""Real-world case 332.

Source: https://github.com/datawhalechina/easy-rl/pull/117
Bug: two problems in a Double DQN: "TD target does not have detach(), which is equivalent to
not using semi-gradient method", and "the outputs of policy_net and target_net are the
same, which is because they maintain the same network, and target_net changes immediately
after policy_net changes": the target network was the online network itself, so the TD
target is computed by the trained network inside the tape and the gradient flows through it.
Setting: Keras 3 Sequential Q-network, tf.function train step, target_net aliased to
policy_net, Huber loss.
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
target_net = policy_net  # meant to be a copy: make_q_network() + set_weights
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
