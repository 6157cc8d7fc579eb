"""Clean control 604 (expected clean).

The WGAN-GP critic step of case 204 done as in the keras.io example: the
interpolates are watched inside the gradient-penalty tape, the penalty is
added to the Wasserstein loss under the critic's tape, and every critic weight
(and the interpolates) gets a gradient.
Setting: GAN (WGAN-GP critic step), Keras 3 models, eager GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(0)
tf.random.set_seed(0)
latent_dim, data_dim, batch_size = 4, 16, 32

generator = keras.Sequential([keras.Input((latent_dim,)), layers.Dense(32, activation="relu"),
                              layers.Dense(data_dim)], name="generator")
critic = keras.Sequential([keras.Input((data_dim,)), layers.Dense(32), layers.LeakyReLU(0.2),
                           layers.Dense(1)], name="critic")
critic_optimizer = keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9)


def gradient_penalty(critic, real_samples, fake_samples):
    alpha = tf.random.uniform([real_samples.shape[0], 1], 0.0, 1.0)
    interpolated = alpha * real_samples + (1.0 - alpha) * fake_samples
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(interpolated)
        pred = critic(interpolated, training=True)
    grads = gp_tape.gradient(pred, [interpolated])[0]
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1) + 1e-12)
    return tf.reduce_mean((norm - 1.0) ** 2)


real_samples = np.sin(np.linspace(0, 3, data_dim))[None, :] + 0.1 * np.random.randn(batch_size, data_dim)
real_samples = real_samples.astype("float32")
noise = np.random.randn(batch_size, latent_dim).astype("float32")
fake_samples = generator(noise, training=True)
with tf.GradientTape() as tape:
    d_cost = tf.reduce_mean(critic(fake_samples, training=True)) - tf.reduce_mean(critic(real_samples, training=True))
    d_loss = d_cost + 10.0 * gradient_penalty(critic, real_samples, fake_samples)
d_gradient = tape.gradient(d_loss, critic.trainable_variables)
assert all(g is not None for g in d_gradient)
critic_optimizer.apply_gradients(zip(d_gradient, critic.trainable_variables))
print("critic loss:", float(d_loss))
