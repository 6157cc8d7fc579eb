"""Clean control 1078 (expected clean).

Twin of case 1058 (Keras-GAN WGAN-GP under TF2): the penalty scores the very
interpolate it differentiates, `critic(averaged_samples)`, inside the
gradient-penalty tape, so d critic / d averaged_samples exists and the
penalty reaches the critic's weights.
Setting: GAN (WGAN-GP), second-order gradient penalty, nested GradientTapes,
eager custom loop, Keras 3 functional models.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

img_shape = (8, 8, 1)
latent_dim = 16
batch_size = 16


class RandomWeightedAverage(layers.Layer):
    """Provides a (random) weighted average between real and generated image samples"""

    def call(self, inputs):
        alpha = tf.random.uniform((tf.shape(inputs[0])[0], 1, 1, 1))
        return (alpha * inputs[0]) + ((1 - alpha) * inputs[1])


def build_generator():
    noise = keras.Input(shape=(latent_dim,))
    x = layers.Dense(64, activation="relu")(noise)
    x = layers.Dense(int(np.prod(img_shape)), activation="tanh")(x)
    return keras.Model(noise, layers.Reshape(img_shape)(x), name="generator")


def build_critic():
    img = keras.Input(shape=img_shape)
    x = layers.Flatten()(img)
    x = layers.Dense(64)(x)
    x = layers.LeakyReLU(0.2)(x)
    return keras.Model(img, layers.Dense(1, use_bias=False)(x), name="critic")


generator = build_generator()
critic = build_critic()

real_img = keras.Input(shape=img_shape)
z_disc = keras.Input(shape=(latent_dim,))
fake_img = generator(z_disc)
fake = critic(fake_img)
valid = critic(real_img)
interpolated_img = RandomWeightedAverage()([real_img, fake_img])
validity_interpolated = critic(interpolated_img)
critic_model = keras.Model([real_img, z_disc], [valid, fake, validity_interpolated], name="critic_model")
critic_optimizer = keras.optimizers.RMSprop(1e-3)

rng = np.random.default_rng(0)
X_train = np.tanh(rng.normal(size=(128, *img_shape))).astype("float32")

for epoch in range(10):
    imgs = X_train[rng.integers(0, X_train.shape[0], batch_size)]
    noise = rng.normal(0, 1, (batch_size, latent_dim)).astype("float32")
    with tf.GradientTape() as tape:
        with tf.GradientTape() as gp_tape:
            averaged_samples = RandomWeightedAverage()([imgs, generator(noise)])
            gp_tape.watch(averaged_samples)
            valid, fake, _ = critic_model([imgs, noise], training=True)
            validity_interpolated = critic(averaged_samples, training=True)
        gradients = gp_tape.gradient(validity_interpolated, averaged_samples)
        gradients_sqr_sum = tf.reduce_sum(tf.square(gradients), axis=[1, 2, 3])
        gradient_penalty = tf.reduce_mean(tf.square(1 - tf.sqrt(gradients_sqr_sum + 1e-12)))
        d_loss = tf.reduce_mean(fake) - tf.reduce_mean(valid) + 10.0 * gradient_penalty
    grads = tape.gradient(d_loss, critic.trainable_variables)
    critic_optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    print("epoch", epoch, "D loss", float(d_loss))
