"""Real-world case 302.

Source: https://github.com/tensorflow/tensorflow/issues/7236
Bug: "Gradients of the log pdf of normal distributions are zero": the log-density of a
sample drawn with the reparameterisation trick (x = mu + sigma * eps), taken with respect
to the distribution's own mean, is -((mu + sigma * eps - mu) / sigma)^2 / 2 - log sigma: the
mean cancels, and a Gaussian policy's mean head never learns (the same report for PyTorch:
pytorch/pytorch#10943). For the score-function (REINFORCE) term the sample must be stopped.
Setting: Keras 3 Gaussian policy (shared trunk, mean and log-std heads), eager custom loop,
log-probability written out by hand.
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
        actions = mu + std * tf.random.normal(tf.shape(mu))
        log_prob = tf.reduce_sum(-0.5 * tf.square((actions - mu) / std) - log_std - 0.5 * math.log(2 * math.pi), -1)
        loss = -tf.reduce_mean(log_prob * advantages)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
