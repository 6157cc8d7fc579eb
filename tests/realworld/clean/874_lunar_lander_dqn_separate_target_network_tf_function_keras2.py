"""Clean control 874 (look-alike of case 474).

Source: https://community.deeplearning.ai/t/unsupervised-learning-week3-learning-the-state-value-function/474823
The lab as written: the Bellman targets y = R + gamma * max_a Q^(s', a) come from a separate
target_q_network (a copy of q_network, soft-updated after each step), whose variables are not
trained by the tape, so the update is the Q-learning semi-gradient on Q(s, a) only.
Setting: tf.keras (Keras 2) Sequential Q-network, @tf.function agent_learn with the lab's
compute_loss (tf.gather_nd on the taken actions, MSE), mini-batches from a replay buffer.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import Sequential
from tensorflow.keras.layers import Dense, Input
from tensorflow.keras.losses import MSE
from tensorflow.keras.optimizers import Adam

np.random.seed(0)
tf.random.set_seed(0)
STATE_SIZE, NUM_ACTIONS, GAMMA, MINIBATCH_SIZE = 8, 4, 0.995, 64

q_network = Sequential([
    Input(shape=(STATE_SIZE,)),
    Dense(units=64, activation="relu"),
    Dense(units=64, activation="relu"),
    Dense(units=NUM_ACTIONS, activation="linear"),
])
target_q_network = Sequential([
    Input(shape=(STATE_SIZE,)),
    Dense(units=64, activation="relu"),
    Dense(units=64, activation="relu"),
    Dense(units=NUM_ACTIONS, activation="linear"),
])
target_q_network.set_weights(q_network.get_weights())
optimizer = Adam(learning_rate=1e-3)
TAU = 1e-3


def compute_loss(experiences, gamma, q_network, target_q_network):
    states, actions, rewards, next_states, done_vals = experiences
    max_qsa = tf.reduce_max(target_q_network(next_states), axis=-1)
    y_targets = rewards + (gamma * max_qsa * (1 - done_vals))
    q_values = q_network(states)
    q_values = tf.gather_nd(q_values, tf.stack([tf.range(q_values.shape[0]),
                                                tf.cast(actions, tf.int32)], axis=1))
    loss = MSE(y_targets, q_values)
    return loss


@tf.function
def agent_learn(experiences, gamma):
    with tf.GradientTape() as tape:
        loss = compute_loss(experiences, gamma, q_network, target_q_network)
    gradients = tape.gradient(loss, q_network.trainable_variables)
    for g in gradients:
        tf.debugging.assert_all_finite(g, "non-finite gradient")
    optimizer.apply_gradients(zip(gradients, q_network.trainable_variables))
    for target_weights, q_net_weights in zip(target_q_network.weights, q_network.weights):
        target_weights.assign(TAU * q_net_weights + (1.0 - TAU) * target_weights)


for step in range(4):
    experiences = (
        tf.constant(np.random.randn(MINIBATCH_SIZE, STATE_SIZE), tf.float32),
        tf.constant(np.random.randint(0, NUM_ACTIONS, MINIBATCH_SIZE), tf.float32),
        tf.constant(np.random.randn(MINIBATCH_SIZE), tf.float32),
        tf.constant(np.random.randn(MINIBATCH_SIZE, STATE_SIZE), tf.float32),
        tf.constant((np.random.rand(MINIBATCH_SIZE) < 0.1).astype("float32")),
    )
    agent_learn(experiences, GAMMA)
