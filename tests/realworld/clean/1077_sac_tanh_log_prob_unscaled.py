"""Clean control 1077 (expected clean).

Twin of case 1057: the tanh change-of-variables correction uses the unscaled
squashed sample, log(1 - tanh(actions)**2 + noise), as the report suggests,
so the log argument stays positive for any max_action.
Setting: reinforcement learning (soft actor-critic), eager custom loop,
subclassed Keras 3 models, synthetic Pendulum-like replay batch.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

LOG_2PI = float(np.log(2.0 * np.pi))


class CriticNetwork(keras.Model):
    def __init__(self, fc1_dims=64, fc2_dims=64, name="critic"):
        super().__init__(name=name)
        self.fc1 = layers.Dense(fc1_dims, activation="relu")
        self.fc2 = layers.Dense(fc2_dims, activation="relu")
        self.q = layers.Dense(1)

    def call(self, state, action):
        action_value = self.fc1(tf.concat([state, action], axis=1))
        action_value = self.fc2(action_value)
        return self.q(action_value)


class ActorNetwork(keras.Model):
    def __init__(self, max_action, fc1_dims=64, fc2_dims=64, n_actions=1, name="actor"):
        super().__init__(name=name)
        self.max_action = max_action
        self.noise = 1e-6
        self.fc1 = layers.Dense(fc1_dims, activation="relu")
        self.fc2 = layers.Dense(fc2_dims, activation="relu")
        self.mu = layers.Dense(n_actions)
        self.sigma = layers.Dense(n_actions)

    def call(self, state):
        prob = self.fc1(state)
        prob = self.fc2(prob)
        mu = self.mu(prob)
        sigma = tf.clip_by_value(self.sigma(prob), self.noise, 1.0)
        return mu, sigma

    def sample_normal(self, state):
        mu, sigma = self.call(state)
        actions = mu + sigma * tf.random.normal(tf.shape(mu))  # reparameterized sample
        action = tf.math.tanh(actions) * self.max_action
        log_probs = -0.5 * tf.square((actions - mu) / sigma) - tf.math.log(sigma) - 0.5 * LOG_2PI
        log_probs -= tf.math.log(1 - tf.math.pow(tf.math.tanh(actions), 2) + self.noise)
        log_probs = tf.reduce_sum(log_probs, axis=1, keepdims=True)
        return action, log_probs


keras.utils.set_random_seed(1)  # the weights too (Keras 3 draws them from its own seed)
max_action = 2.0  # Pendulum-v1 action bound
actor = ActorNetwork(max_action=max_action)
critic_1 = CriticNetwork(name="critic_1")
actor_optimizer = keras.optimizers.Adam(3e-4)
alpha = 0.2

rng = np.random.default_rng(0)
theta = rng.uniform(-np.pi, np.pi, size=64)
theta_dot = rng.uniform(-8.0, 8.0, size=64)  # Pendulum observation: cos, sin, angular velocity
states = tf.constant(np.stack([np.cos(theta), np.sin(theta), theta_dot], axis=1).astype("float32"))
critic_1(states, tf.zeros((64, 1)))

for step in range(10):
    with tf.GradientTape() as tape:
        new_policy_actions, log_probs = actor.sample_normal(states)
        critic_value = critic_1(states, new_policy_actions)
        actor_loss = tf.reduce_mean(alpha * log_probs - critic_value)
    actor_network_gradient = tape.gradient(actor_loss, actor.trainable_variables)
    actor_optimizer.apply_gradients(zip(actor_network_gradient, actor.trainable_variables))
    print("step", step, "actor loss", float(actor_loss))
