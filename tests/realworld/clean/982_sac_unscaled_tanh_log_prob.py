"""Clean control 982 (expected clean).

Look-alike of case 582: the tanh log-probability correction uses the unscaled
squashed sample, log(1 - tanh(raw)^2 + 1e-6), and the scaling by action_scale
is applied afterwards, so the argument of the log stays positive and the actor
loss and gradients are finite.
Setting: RL (soft actor-critic), Keras 3 actor and critic, eager custom training loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

obs_dim, act_dim, action_scale, alpha = 3, 1, 2.0, 0.2


class SoftDeterministicPolicy(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden1 = layers.Dense(64, activation="relu")
        self.hidden2 = layers.Dense(64, activation="relu")
        self.mu = layers.Dense(act_dim)
        self.log_std = layers.Dense(act_dim)

    def call(self, state):
        h = self.hidden2(self.hidden1(state))
        return self.mu(h), tf.clip_by_value(self.log_std(h), -20.0, 2.0)

    def sample(self, state):
        mu, log_std = self(state)
        std = tf.exp(log_std)
        raw = mu + std * tf.random.normal(tf.shape(mu))
        log_prob = -0.5 * (((raw - mu) / std) ** 2 + 2.0 * log_std + np.log(2.0 * np.pi))
        squashed = tf.tanh(raw)
        log_prob -= tf.math.log(1.0 - tf.square(squashed) + 1e-6)
        action = squashed * action_scale
        return action, tf.reduce_sum(log_prob, axis=1)


policy = SoftDeterministicPolicy()
q_function = keras.Sequential([keras.Input((obs_dim + act_dim,)), layers.Dense(64, activation="relu"),
                               layers.Dense(1)], name="q_function")
policy_optimizer = keras.optimizers.Adam(3e-4)
q_optimizer = keras.optimizers.Adam(3e-4)

rng = np.random.default_rng(0)
states = rng.normal(size=(64, obs_dim)).astype("float32")
replay_actions = rng.uniform(-action_scale, action_scale, size=(64, act_dim)).astype("float32")
rewards = -np.square(replay_actions[:, 0] - np.tanh(states[:, 0])).astype("float32")
for step in range(40):
    with tf.GradientTape() as q_tape:
        q_pred = tf.squeeze(q_function(tf.concat([states, replay_actions], axis=1)), axis=1)
        q_loss = tf.reduce_mean(tf.square(q_pred - rewards))
    q_grads = q_tape.gradient(q_loss, q_function.trainable_variables)
    q_optimizer.apply_gradients(zip(q_grads, q_function.trainable_variables))

    with tf.GradientTape() as tape:
        actions, log_probs = policy.sample(states)
        q_values = tf.squeeze(q_function(tf.concat([states, actions], axis=1)), axis=1)
        policy_loss = tf.reduce_mean(alpha * log_probs - q_values)
    grads = tape.gradient(policy_loss, policy.trainable_variables)
    policy_optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    if step % 10 == 0 or step == 39:
        print("step", step, "q loss", float(q_loss), "policy loss", float(policy_loss))
