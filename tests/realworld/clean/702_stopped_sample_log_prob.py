"""Clean control 702 (look-alike of case 302).

Source: https://github.com/tensorflow/tensorflow/issues/7236
The same Gaussian policy and score-function loss, with the sampled actions stopped before
their log-probability is taken: the mean head gets the REINFORCE gradient.
"""
import math

import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class GaussianPolicy(keras.Model):
    def __init__(self, action_dim):
        super().__init__()
        self.trunk = keras.layers.Dense(32, activation="tanh")
        self.mean = keras.layers.Dense(action_dim)
        self.log_std = keras.layers.Dense(action_dim)

    def call(self, states):
        h = self.trunk(states)
        return self.mean(h), self.log_std(h)


policy = GaussianPolicy(2)
optimizer = keras.optimizers.Adam(3e-4)
states = np.random.randn(64, 4).astype("float32")
advantages = np.random.randn(64).astype("float32")
for step in range(3):
    with tf.GradientTape() as tape:
        mu, log_std = policy(states)
        std = tf.exp(log_std)
        actions = tf.stop_gradient(mu + std * tf.random.normal(tf.shape(mu)))
        log_prob = tf.reduce_sum(-0.5 * tf.square((actions - mu) / std) - log_std - 0.5 * math.log(2 * math.pi), -1)
        loss = -tf.reduce_mean(log_prob * advantages)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
