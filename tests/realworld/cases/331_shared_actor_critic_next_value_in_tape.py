"""Real-world case 331.

Source: https://github.com/philtabor/Youtube-Code-Repository/issues/41
Bug: "[TensorFlow2] Critic Loss Calculation for actor_critic": the one-step actor-critic
computes state_value_ = actor_critic(state_) inside the GradientTape, so "grad(V(S', w))
appears in the update for w, which contradicts the pseudocode" (Sutton & Barto p. 332,
where the TD target is a constant). The delta is both the critic's TD error and the
actor's weight.
Setting: Keras 3 subclassed network with shared trunk, value and policy heads, eager
persistent tape, the total loss actor + critic.
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
            delta = reward + self.gamma * state_value_ * (1 - int(done)) - state_value
            actor_loss = -log_prob * delta
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
