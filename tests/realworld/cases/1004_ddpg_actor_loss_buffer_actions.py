"""Real-world case 1004.

Source: https://github.com/tensorflow/tensorflow/issues/43065
Bug: in a DDPG agent (separate buffer / networks / agent files merged here),
the actor update in `learn()` computes `new_policy_actions = self.actor(states)`
but scores the critic on the replay buffer's `actions` instead, so the actor
loss does not depend on the actor at all and
`actor.optimizer.apply_gradients` raises "No gradients provided for any
variable" although the loss is non-zero.
Setting: RL (DDPG), eager custom learn step, subclassed tf_keras (Keras 2) models.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras.layers import Dense


class ReplayBuffer:
    def __init__(self, max_size, input_shape, n_actions):
        self.mem_size, self.mem_cntr = max_size, 0
        self.state_memory = np.zeros((max_size, input_shape), dtype=np.float32)
        self.new_state_memory = np.zeros((max_size, input_shape), dtype=np.float32)
        self.action_memory = np.zeros((max_size, n_actions), dtype=np.float32)
        self.reward_memory = np.zeros(max_size, dtype=np.float32)
        self.terminal_memory = np.zeros(max_size, dtype=np.bool_)

    def store_transition(self, state, action, reward, state_, done):
        i = self.mem_cntr % self.mem_size
        self.state_memory[i], self.new_state_memory[i] = state, state_
        self.action_memory[i], self.reward_memory[i], self.terminal_memory[i] = action, reward, done
        self.mem_cntr += 1

    def sample_buffer(self, batch_size):
        batch = np.random.choice(min(self.mem_cntr, self.mem_size), batch_size)
        return (self.state_memory[batch], self.action_memory[batch], self.reward_memory[batch],
                self.new_state_memory[batch], self.terminal_memory[batch])


class CriticNetwork(keras.Model):
    def __init__(self, fc1_dims=64, fc2_dims=64):
        super().__init__()
        self.fc1 = Dense(fc1_dims, activation="relu")
        self.fc2 = Dense(fc2_dims, activation="relu")
        self.q = Dense(1, activation=None)

    def call(self, state, action):
        action_value = self.fc1(tf.concat([state, action], axis=1))
        return self.q(self.fc2(action_value))


class ActorNetwork(keras.Model):
    def __init__(self, fc1_dims=64, fc2_dims=64, n_actions=2):
        super().__init__()
        self.fc1 = Dense(fc1_dims, activation="relu")
        self.fc2 = Dense(fc2_dims, activation="relu")
        self.mu = Dense(n_actions, activation="tanh")

    def call(self, state):
        return self.mu(self.fc2(self.fc1(state)))


class Agent:
    def __init__(self, input_dims=3, n_actions=2, gamma=0.99, batch_size=32):
        self.gamma, self.batch_size = gamma, batch_size
        self.memory = ReplayBuffer(1000, input_dims, n_actions)
        self.actor, self.critic = ActorNetwork(n_actions=n_actions), CriticNetwork()
        self.target_actor, self.target_critic = ActorNetwork(n_actions=n_actions), CriticNetwork()
        self.actor.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001))
        self.critic.compile(optimizer=keras.optimizers.Adam(learning_rate=0.002))

    def learn(self):
        state, action, reward, new_state, done = self.memory.sample_buffer(self.batch_size)
        states = tf.convert_to_tensor(state, dtype=tf.float32)
        states_ = tf.convert_to_tensor(new_state, dtype=tf.float32)
        rewards = tf.convert_to_tensor(reward, dtype=tf.float32)
        actions = tf.convert_to_tensor(action, dtype=tf.float32)

        with tf.GradientTape() as tape:
            target_actions = self.target_actor(states_)
            critic_value_ = tf.squeeze(self.target_critic(states_, target_actions), 1)
            critic_value = tf.squeeze(self.critic(states, actions), 1)
            target = rewards + self.gamma * critic_value_ * (1 - done)
            critic_loss = keras.losses.MSE(target, critic_value)
        critic_network_gradient = tape.gradient(critic_loss, self.critic.trainable_variables)
        self.critic.optimizer.apply_gradients(zip(critic_network_gradient, self.critic.trainable_variables))

        with tf.GradientTape() as tape:
            new_policy_actions = self.actor(states)
            actor_loss = -self.critic(states, actions)
            actor_loss = tf.math.reduce_mean(actor_loss)
        actor_network_gradient = tape.gradient(actor_loss, self.actor.trainable_variables)
        self.actor.optimizer.apply_gradients(zip(actor_network_gradient, self.actor.trainable_variables))
        return float(critic_loss), float(actor_loss)


np.random.seed(0)
agent = Agent()
for t in range(64):
    s, s_ = np.random.normal(size=3), np.random.normal(size=3)
    a = np.random.uniform(-1, 1, size=2)
    agent.memory.store_transition(s, a, np.random.normal(), s_, False)
for step in range(3):
    print("critic/actor loss", agent.learn())
