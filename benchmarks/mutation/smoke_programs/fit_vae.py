# ruff: noqa: B905
"""Our own smoke program: a VAE trained by `model.fit` with a custom `train_step`."""

import keras
import numpy as np
import tensorflow as tf

latent = 2
enc_in = keras.Input((16,))
h = keras.layers.Dense(8, activation="relu")(enc_in)
z_mean = keras.layers.Dense(latent)(h)
z_log_var = keras.layers.Dense(latent)(h)
encoder = keras.Model(enc_in, [z_mean, z_log_var])
dec_in = keras.Input((latent,))
decoder = keras.Model(
    dec_in, keras.layers.Dense(16, activation="sigmoid")(keras.layers.Dense(8, activation="relu")(dec_in))
)


class VAE(keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var = self.encoder(data)
            eps = tf.random.normal(tf.shape(z_mean))
            z = z_mean + tf.exp(0.5 * z_log_var) * eps
            reconstruction = self.decoder(z)
            recon_loss = tf.reduce_mean(
                tf.reduce_sum(keras.losses.binary_crossentropy(data[..., None], reconstruction[..., None]), axis=1)
            )
            kl_loss = -0.5 * tf.reduce_mean(
                tf.reduce_sum(1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var), axis=1)
            )
            total_loss = recon_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return {"loss": total_loss}


data = np.random.default_rng(2).uniform(size=(64, 16)).astype("float32")
vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
vae.fit(data, epochs=1, batch_size=32, verbose=0)
