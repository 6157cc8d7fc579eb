"""Real-world case 208.

Source: https://github.com/tensorflow/tensorflow/issues/37141
Bug: in a Wasserstein/adversarial autoencoder adapted from
timsainb/tensorflow2-generative-models, the latent discriminator is updated
with disc_tape.gradient(-latent_loss, ...): the negation runs after the tape
block has closed, so it is not recorded and every discriminator gradient is
None ("No gradients provided for any variable"); removing the minus sign made
it work.
Setting: adversarial autoencoder, tf.keras (Keras 2) subclassed model, @tf.function train step.
"""
import numpy as np
import tensorflow as tf

np.random.seed(0)
tf.random.set_seed(0)


class WAE(tf.keras.Model):
    def __init__(self, **kwargs):
        super(WAE, self).__init__()
        self.__dict__.update(kwargs)
        self.enc = tf.keras.Sequential(self.enc)
        self.dec = tf.keras.Sequential(self.dec)
        self.disc = tf.keras.Sequential([
            tf.keras.layers.InputLayer(input_shape=(self.n_z,)),
            tf.keras.layers.Dense(units=32, activation="relu", name="disc1"),
            tf.keras.layers.Dense(units=1, name="disc2"),
        ])

    def compute_loss(self, x):
        z = self.enc(x)
        recon_loss = tf.reduce_mean(tf.square(x - self.dec(z)))
        d_real = tf.sigmoid(self.disc(tf.random.normal(tf.shape(z))))
        d_fake = tf.sigmoid(self.disc(z))
        latent_loss = tf.reduce_mean(tf.math.log(d_real + 1e-8) + tf.math.log(1.0 - d_fake + 1e-8))
        return recon_loss, latent_loss

    def compute_gradients(self, x):
        with tf.GradientTape() as ae_tape, tf.GradientTape() as disc_tape:
            recon_loss, latent_loss = self.compute_loss(x)
        ae_vars = self.enc.trainable_variables + self.dec.trainable_variables
        ae_gradients = ae_tape.gradient(recon_loss, ae_vars)
        disc_gradients = disc_tape.gradient(-latent_loss, self.disc.trainable_variables)
        return ae_gradients, disc_gradients

    @tf.function
    def train(self, train_x):
        ae_gradients, disc_gradients = self.compute_gradients(train_x)
        self.ae_optimizer.apply_gradients(
            zip(ae_gradients, self.enc.trainable_variables + self.dec.trainable_variables))
        self.disc_optimizer.apply_gradients(zip(disc_gradients, self.disc.trainable_variables))


n_z = 2
model = WAE(
    n_z=n_z,
    enc=[tf.keras.layers.InputLayer(input_shape=(16,)), tf.keras.layers.Dense(16, activation="relu"),
         tf.keras.layers.Dense(n_z)],
    dec=[tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(16)],
    ae_optimizer=tf.keras.optimizers.Adam(1e-3),
    disc_optimizer=tf.keras.optimizers.Adam(1e-3),
)
train_x = np.random.rand(32, 16).astype("float32")
for step in range(2):
    model.train(train_x)
