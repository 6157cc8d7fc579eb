"""Real-world case 474.

Source: https://community.deeplearning.ai/t/unsupervised-learning-week3-learning-the-state-value-function/474823
Bug: in the Lunar Lander DQN lab, compute_loss builds the Bellman targets
y = R + gamma * max_a Q^(s', a) from target_q_network; the thread argues "You could implement
this algorithm with one Q_network ... think with one network". Passing q_network as the
target network puts max_a Q(s', a) of the trained network inside the tape with no
stop_gradient: the update descends on the target as well as on Q(s, a) (a residual-gradient
step instead of the Q-learning semi-gradient), and training is unstable.
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
optimizer = Adam(learning_rate=1e-3)


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
        loss = compute_loss(experiences, gamma, q_network, q_network)
    gradients = tape.gradient(loss, q_network.trainable_variables)
    optimizer.apply_gradients(zip(gradients, q_network.trainable_variables))


for step in range(4):
    experiences = (
        tf.constant(np.random.randn(MINIBATCH_SIZE, STATE_SIZE), tf.float32),
        tf.constant(np.random.randint(0, NUM_ACTIONS, MINIBATCH_SIZE), tf.float32),
        tf.constant(np.random.randn(MINIBATCH_SIZE), tf.float32),
        tf.constant(np.random.randn(MINIBATCH_SIZE, STATE_SIZE), tf.float32),
        tf.constant((np.random.rand(MINIBATCH_SIZE) < 0.1).astype("float32")),
    )
    agent_learn(experiences, GAMMA)
