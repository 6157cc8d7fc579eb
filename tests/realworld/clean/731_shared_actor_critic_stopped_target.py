"""Clean control 731 (look-alike of case 331).

Source: https://github.com/philtabor/Youtube-Code-Repository/issues/41
The same shared actor-critic, with V(s') stopped in the TD target and the TD error stopped
where it weighs the policy's log-probability (the update of Sutton & Barto p. 332).
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class ActorCriticNetwork(keras.Model):
    def __init__(self, n_actions, fc1_dims=64, fc2_dims=32):
        super().__init__()
        self.fc1 = keras.layers.Dense(fc1_dims, activation="relu")
        self.fc2 = keras.layers.Dense(fc2_dims, activation="relu")
        self.v = keras.layers.Dense(1)
        self.pi = keras.layers.Dense(n_actions, activation="softmax")

    def call(self, state):
        value = self.fc2(self.fc1(state))
        return self.v(value), self.pi(value)


class Agent:
    def __init__(self, n_actions=2, gamma=0.99):
        self.gamma = gamma
        self.action = 0
        self.actor_critic = ActorCriticNetwork(n_actions)
        self.optimizer = keras.optimizers.Adam(3e-4)

    def learn(self, state, reward, state_, done):
        state = tf.convert_to_tensor([state], dtype=tf.float32)
        state_ = tf.convert_to_tensor([state_], dtype=tf.float32)
        reward = tf.convert_to_tensor(reward, dtype=tf.float32)
        with tf.GradientTape(persistent=True) as tape:
            state_value, probs = self.actor_critic(state)
            state_value_, _ = self.actor_critic(state_)
            state_value = tf.squeeze(state_value)
            state_value_ = tf.squeeze(state_value_)
            log_prob = tf.math.log(probs[0, self.action])
            target = reward + self.gamma * tf.stop_gradient(state_value_) * (1 - int(done))
            delta = target - state_value
            actor_loss = -log_prob * tf.stop_gradient(delta)
            critic_loss = delta**2
            total_loss = actor_loss + critic_loss
        gradient = tape.gradient(total_loss, self.actor_critic.trainable_variables)
        self.optimizer.apply_gradients(zip(gradient, self.actor_critic.trainable_variables))


agent = Agent()
observation = np.random.randn(4)
for step in range(5):
    observation_ = np.random.randn(4)
    agent.learn(observation, 1.0, observation_, False)
    observation = observation_
