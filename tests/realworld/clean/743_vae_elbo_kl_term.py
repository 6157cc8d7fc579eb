"""Clean control 743 (expected clean).

A VAE's ELBO: the reconstruction error compares the decoder's output with the input, and
the analytic KL term -0.5 * (1 + log_var - mu^2 - exp(log_var)) regularises the encoder;
both terms must carry the gradient, and neither holds a target.
Setting: Keras 3 functional encoder/decoder, reparameterised sample, eager tape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
enc_in = keras.Input((8,))
h = keras.layers.Dense(16, activation="relu")(enc_in)
encoder = keras.Model(enc_in, [keras.layers.Dense(2)(h), keras.layers.Dense(2)(h)])
decoder = keras.Sequential([keras.Input((2,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
optimizer = keras.optimizers.Adam(1e-3)
x = np.random.rand(32, 8).astype("float32")

with tf.GradientTape() as tape:
    mu, log_var = encoder(x)
    z = mu + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mu))
    x_hat = decoder(z)
    recon = tf.reduce_mean(tf.reduce_sum(tf.square(x - x_hat), axis=1))
    kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1.0 + log_var - tf.square(mu) - tf.exp(log_var), axis=1))
    loss = recon + kl
variables = encoder.trainable_variables + decoder.trainable_variables
grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
print("loss", float(loss))
