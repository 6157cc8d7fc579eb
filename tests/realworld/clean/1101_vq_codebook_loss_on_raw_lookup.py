"""Real-world control 1101 (twin of case 1081).

Source: https://github.com/showlab/Olaf-World/issues/8
Fixed: `encode` also returns the raw codebook lookup `z`, and the codebook
and commitment losses are computed on it (the straight-through `z_q` only
feeds the decoder), so the codebook, encoder and decoder all train.
Setting: Keras 3, model.fit with a custom train_step (keras.ops), generative VQ model.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)
LATENT, CODES, FEAT = 8, 16, 20


class VectorQuantizer(layers.Layer):
    def __init__(self, num_codes, dim, **kwargs):
        super().__init__(**kwargs)
        self.codebook = self.add_weight(
            shape=(num_codes, dim), initializer="random_uniform", name="codebook")

    def call(self, x):
        dist = (ops.sum(x ** 2, axis=1, keepdims=True)
                - 2.0 * ops.matmul(x, ops.transpose(self.codebook))
                + ops.sum(self.codebook ** 2, axis=1))
        indices = ops.argmin(dist, axis=1)
        z = ops.take(self.codebook, indices, axis=0)
        z_q = x + ops.stop_gradient(z - x)
        return z_q, z, x, indices


class VQLatentActionModel(keras.Model):
    def __init__(self, beta=0.25):
        super().__init__()
        self.encoder = keras.Sequential(
            [layers.Dense(32, activation="relu"), layers.Dense(LATENT)], name="encoder")
        self.vq = VectorQuantizer(CODES, LATENT, name="vq")
        self.decoder = keras.Sequential(
            [layers.Dense(32, activation="relu"), layers.Dense(FEAT)], name="decoder")
        self.beta = beta

    def encode(self, x):
        z_e = self.encoder(x)
        z_q, z, _, _ = self.vq(z_e)
        return z_e, z_q, z

    def call(self, x):
        return self.decoder(self.encode(x)[1])

    def train_step(self, data):
        x = data
        with tf.GradientTape() as tape:
            z_e, z_q, z = self.encode(x)
            recon = self.decoder(z_q)
            recon_loss = ops.mean((recon - x) ** 2)
            codebook_loss = ops.mean((z - ops.stop_gradient(z_e)) ** 2)
            commit_loss = ops.mean((z_e - ops.stop_gradient(z)) ** 2)
            loss = recon_loss + codebook_loss + self.beta * commit_loss
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "recon": recon_loss}


x = np.random.normal(size=(256, FEAT)).astype("float32")
model = VQLatentActionModel()
model(x[:2])
model.compile(optimizer=keras.optimizers.Adam(1e-3))
before = ops.convert_to_numpy(model.vq.codebook).copy()
model.fit(x, epochs=2, batch_size=64, verbose=0)
after = ops.convert_to_numpy(model.vq.codebook)
print("codebook moved:", float(np.abs(after - before).max()))
