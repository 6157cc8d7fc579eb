"""Real-world control 1117 (twin of case 1097).

Source: https://github.com/tdeboissiere/DeepLearningImplementations/issues/68
Fixed: as in the report, 1e-8 is added inside the sqrt of the
gradient-penalty norm, so interpolates where the ReLU critic is flat give a
finite second-order gradient and both networks train.
Setting: Keras 3 WGAN subclassed Model, custom train_step with a nested GradientTape, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

DIM, LATENT = 16, 8


class WGANGP(keras.Model):
    def __init__(self):
        super().__init__()
        self.critic = keras.Sequential(
            [layers.Dense(4, activation="relu", name="critic_hidden"), layers.Dense(1, use_bias=False, name="critic_out")],
            name="critic")
        self.generator = keras.Sequential(
            [layers.Dense(16, activation="relu", name="gen_hidden"), layers.Dense(DIM, activation="tanh", name="gen_out")],
            name="generator")
        self.seed_gen = keras.random.SeedGenerator(1)

    def call(self, z):
        return self.generator(z)

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer, self.g_optimizer = d_optimizer, g_optimizer

    def gradient_penalty(self, real, fake):
        alpha = keras.random.uniform([tf.shape(real)[0], 1], seed=self.seed_gen)
        interpolated = real + alpha * (fake - real)
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.critic(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(1e-8 + tf.reduce_sum(tf.square(grads), axis=1))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real):
        batch = tf.shape(real)[0]
        z = keras.random.normal([batch, LATENT], seed=self.seed_gen)
        with tf.GradientTape() as tape:
            fake = self.generator(z, training=True)
            d_cost = tf.reduce_mean(self.critic(fake, training=True)) - tf.reduce_mean(self.critic(real, training=True))
            d_loss = d_cost + 10.0 * self.gradient_penalty(real, fake)
        d_grads = tape.gradient(d_loss, self.critic.trainable_variables)
        self.d_optimizer.apply_gradients(zip(d_grads, self.critic.trainable_variables))

        z = keras.random.normal([batch, LATENT], seed=self.seed_gen)
        with tf.GradientTape() as tape:
            g_loss = -tf.reduce_mean(self.critic(self.generator(z, training=True), training=True))
        g_grads = tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(g_grads, self.generator.trainable_variables))
        return {"d_loss": d_loss, "g_loss": g_loss}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
real_data = np.tanh(rng.normal(0.3, 0.5, size=(256, DIM))).astype("float32")

gan = WGANGP()
gan.generator(np.zeros((1, LATENT), "float32"))
gan.critic(real_data[:1])
gan.compile(d_optimizer=keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9),
            g_optimizer=keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9))
gan.fit(real_data, batch_size=64, epochs=2, verbose=2)
