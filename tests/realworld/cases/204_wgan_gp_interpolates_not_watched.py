"""Real-world case 204.

Source: https://github.com/tensorflow/tensorflow/issues/36436
Bug: a WGAN-GP on 1-D data computes the gradient penalty with a GradientTape
around the critic call on the interpolated samples, but the interpolates are a
plain tensor built from the real and generated batches and are never watched,
so the gradient of the critic output with respect to them is always None
(the reporter only got a value after turning the interpolates into a tf.Variable).
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


def gradient_penalty(critic, real_samples, fake_samples):
    alpha = tf.random.uniform([real_samples.shape[0], 1], 0.0, 1.0)
    interpolated = alpha * real_samples + (1.0 - alpha) * fake_samples
    with tf.GradientTape() as gp_tape:
        pred = critic(interpolated, training=True)
    grads = gp_tape.gradient(pred, [interpolated])[0]
    print("d critic / d interpolated:", grads)
    return grads


real_samples = np.sin(np.linspace(0, 3, data_dim))[None, :] + 0.1 * np.random.randn(batch_size, data_dim)
noise = np.random.randn(batch_size, latent_dim).astype("float32")
fake_samples = generator(noise, training=True)
gradient_penalty(critic, real_samples.astype("float32"), fake_samples)
