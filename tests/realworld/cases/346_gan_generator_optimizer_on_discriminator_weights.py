"""Real-world case 346.

Source: https://github.com/keras-team/keras-io/issues/1101
Bug: a GAN's train_step computes the generator loss through the discriminator, but asks
for and applies the gradients of `self.discriminator.trainable_weights` with the generator's
optimizer: every gradient exists, nothing is reported, and the generator never trains.
Setting: Keras 3 subclassed GAN, custom train_step with two tapes, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(6)],
                             name="generator")
discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                                  keras.layers.Dense(1)], name="discriminator")
bce = keras.losses.BinaryCrossentropy(from_logits=True)


class GAN(keras.Model):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator, self.discriminator = generator, discriminator
        self.d_optimizer = keras.optimizers.Adam(1e-3)
        self.g_optimizer = keras.optimizers.Adam(1e-3)

    def train_step(self, real):
        batch = tf.shape(real)[0]
        z = tf.random.normal((batch, 4))
        with tf.GradientTape() as tape:
            fake = self.generator(z)
            d_loss = bce(tf.ones((batch, 1)), self.discriminator(real)) + bce(
                tf.zeros((batch, 1)), self.discriminator(fake))
        d_grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_weights))
        with tf.GradientTape() as tape:
            g_loss = bce(tf.ones((batch, 1)), self.discriminator(self.generator(z)))
        g_grads = tape.gradient(g_loss, self.discriminator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(g_grads, self.discriminator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


gan = GAN(generator, discriminator)
gan.compile()
gan.fit(np.random.randn(64, 6).astype("float32"), batch_size=32, epochs=1, verbose=0)
