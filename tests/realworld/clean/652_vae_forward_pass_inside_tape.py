"""Clean control 652 (look-alike of case 252).

Source: https://github.com/tensorflow/tensorflow/issues/54341
The same VAE step with the forward pass moved inside the GradientTape, so
every encoder and decoder variable is recorded and gets a gradient.
Setting: Keras 3 subclassed VAE, eager custom training step.
"""
import keras
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


class VAE(keras.Model):
    def __init__(self, latent_dim=3):
        super().__init__()
        self.flatten = keras.layers.Flatten()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.mu = keras.layers.Dense(latent_dim)
        self.log_var = keras.layers.Dense(latent_dim)
        self.decode = keras.layers.Dense(28 * 28, activation="sigmoid")
        self.reshape = keras.layers.Reshape((28, 28, 1))

    def call(self, x):
        h = self.hidden(self.flatten(x))
        mu, log_var = self.mu(h), self.log_var(h)
        z = mu + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mu))
        return self.reshape(self.decode(z)), mu, log_var


def compute_reconstruction_loss(data, reconstruction):
    return tf.reduce_mean(tf.reduce_sum(tf.square(data - reconstruction), axis=[1, 2, 3]))


def compute_kl_divergence_loss(mu, log_var):
    return tf.reduce_mean(-0.5 * tf.reduce_sum(1 + log_var - tf.square(mu) - tf.exp(log_var), axis=1))


def compute_total_loss(data, reconstruction, mu, log_var, alpha=1):
    recon_loss = compute_reconstruction_loss(data=data, reconstruction=reconstruction)
    kl_loss = compute_kl_divergence_loss(mu=mu, log_var=log_var)
    total_loss = (recon_loss * alpha) + kl_loss
    return total_loss**2


model = VAE()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
X = np.random.rand(4, 28, 28, 1).astype("float32")

with tf.GradientTape() as tape:
    X_recon, mu, log_var = model(X)
    loss = compute_total_loss(data=X, reconstruction=X_recon, mu=mu, log_var=log_var, alpha=1)

grads = tape.gradient(loss, model.trainable_weights)
assert all(g is not None for g in grads)
optimizer.apply_gradients(zip(grads, model.trainable_weights))
