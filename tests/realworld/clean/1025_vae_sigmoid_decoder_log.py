"""Clean control 1025 (expected clean).

Source: https://github.com/pkmital/tensorflow_tutorials/issues/23
Twin of case 1005: the VAE decoder ends in a sigmoid, so the Bernoulli
log-likelihood only takes logs of values in (0, 1) and the cost is finite.
Setting: VAE, Keras 3 model with a custom train_step trained by fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

n_input, n_hidden, n_code = 64, 32, 2


class VAE(keras.Model):
    def __init__(self):
        super().__init__()
        self.enc_1 = layers.Dense(n_hidden, activation="softplus")
        self.enc_mu = layers.Dense(n_code)
        self.enc_log_sigma = layers.Dense(n_code)
        self.dec_1 = layers.Dense(n_hidden, activation="softplus")
        self.dec_out = layers.Dense(n_input, activation="sigmoid")
        self.cost_tracker = keras.metrics.Mean(name="cost")

    def call(self, x):
        h = self.enc_1(x)
        z_mu, z_log_sigma = self.enc_mu(h), self.enc_log_sigma(h)
        epsilon = tf.random.normal(tf.shape(z_mu))
        z = z_mu + tf.exp(z_log_sigma) * epsilon
        y = self.dec_out(self.dec_1(z))
        return y, z_mu, z_log_sigma

    def train_step(self, data):
        x = data
        with tf.GradientTape() as tape:
            y, z_mu, z_log_sigma = self(x, training=True)
            log_px_given_z = -tf.reduce_sum(x * tf.math.log(1e-10 + y) + (1 - x) * tf.math.log(1e-10 + 1 - y), 1)
            kl_div = -0.5 * tf.reduce_sum(1.0 + 2.0 * z_log_sigma - tf.square(z_mu) - tf.exp(2.0 * z_log_sigma), 1)
            cost = tf.reduce_mean(log_px_given_z + kl_div)
        grads = tape.gradient(cost, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.cost_tracker.update_state(cost)
        return {"cost": self.cost_tracker.result()}


rng = np.random.default_rng(0)
x_train = (rng.uniform(size=(256, n_input)) > 0.5).astype("float32")
vae = VAE()
vae.compile(optimizer=keras.optimizers.Adam(1e-3))
vae.fit(x_train, batch_size=32, epochs=4, verbose=2)
