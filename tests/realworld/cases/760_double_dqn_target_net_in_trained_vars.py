"""Real-world case 760.

Source: https://github.com/fg91/Deep-Q-Learning/issues/5
Bug: Double DQN ported to a Keras 3 agent model that owns both the main and
the target DQN. The Bellman target
target_q = rewards + gamma * double_q * (1 - terminal_flags) is computed from
the target DQN inside the GradientTape without tf.stop_gradient, and the step
differentiates with respect to `self.trainable_variables`, which includes the
target network. As the issue warns, the TD error is back-propagated into the
target DQN, which the optimizer then moves towards the prediction.
Setting: reinforcement learning (Double DQN, target network, replay batch), keras.Model subclass, tf.function step, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

N_ACTIONS, STATE_DIM, GAMMA = 4, 6, 0.99


def build_dqn(name):
    return keras.Sequential([
        keras.Input((STATE_DIM,)),
        layers.Dense(32, activation="relu"),
        layers.Dense(32, activation="relu"),
        layers.Dense(N_ACTIONS),
    ], name=name)


class DoubleDQNAgent(keras.Model):
    def __init__(self):
        super().__init__()
        self.main_dqn = build_dqn("main_dqn")
        self.target_dqn = build_dqn("target_dqn")
        self.target_dqn.set_weights(self.main_dqn.get_weights())
        self.huber = keras.losses.Huber()
        self.dqn_optimizer = keras.optimizers.Adam(1e-3)

    def call(self, states):
        return self.main_dqn(states)

    @tf.function
    def learn(self, states, actions, rewards, new_states, terminal_flags):
        best_actions = tf.argmax(self.main_dqn(new_states), axis=1)
        with tf.GradientTape() as tape:
            q_values = self.main_dqn(states)
            q = tf.reduce_sum(q_values * tf.one_hot(actions, N_ACTIONS), axis=1)
            target_q_vals = self.target_dqn(new_states)
            double_q = tf.reduce_sum(target_q_vals * tf.one_hot(best_actions, N_ACTIONS), axis=1)
            target_q = rewards + (GAMMA * double_q * (1 - terminal_flags))
            loss = self.huber(target_q, q)
        grads = tape.gradient(loss, self.trainable_variables)
        self.dqn_optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return loss

    def update_target_network(self):
        self.target_dqn.set_weights(self.main_dqn.get_weights())


rng = np.random.default_rng(0)
agent = DoubleDQNAgent()
for step in range(30):
    states = rng.normal(size=(32, STATE_DIM)).astype("float32")
    actions = rng.integers(0, N_ACTIONS, size=32)
    rewards = rng.normal(size=32).astype("float32")
    new_states = (states + 0.1 * rng.normal(size=(32, STATE_DIM))).astype("float32")
    terminal_flags = (rng.random(32) < 0.1).astype("float32")
    loss = agent.learn(states, actions, rewards, new_states, terminal_flags)
    if step % 10 == 9:
        agent.update_target_network()
print("loss", float(loss))
