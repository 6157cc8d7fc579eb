"""Real-world control 1102 (twin of case 1082).

Source: https://github.com/Biohub/esm/issues/92
Fixed: while the tokenizer is trained end to end the decoder consumes the
straight-through codebook embeddings `z_q` (gradients copied to the encoder)
instead of re-embedding the argmin token ids, so encoder and decoder both train;
token ids are only turned into embeddings through the codebook.
Setting: tf_keras (Keras 2), model.fit with a custom train_step, generative VQ-VAE.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

np.random.seed(0)
tf.random.set_seed(0)
keras.utils.set_random_seed(0)
FEAT, LATENT, CODES = 24, 8, 32


class EMACodebook(layers.Layer):
    def __init__(self, num_codes, dim, decay=0.99, **kwargs):
        super().__init__(**kwargs)
        self.decay = decay
        self.embeddings = self.add_weight(
            name="embeddings", shape=(num_codes, dim),
            initializer="random_normal", trainable=False)

    def call(self, z_e):
        dist = (tf.reduce_sum(z_e ** 2, axis=1, keepdims=True)
                - 2.0 * tf.matmul(z_e, self.embeddings, transpose_b=True)
                + tf.reduce_sum(self.embeddings ** 2, axis=1))
        tokens = tf.argmin(dist, axis=1)
        z_q = tf.gather(self.embeddings, tokens)
        z_q = z_e + tf.stop_gradient(z_q - z_e)
        return z_q, tokens

    def ema_update(self, z_e, tokens):
        onehot = tf.one_hot(tokens, tf.shape(self.embeddings)[0])
        counts = tf.reduce_sum(onehot, axis=0)[:, None]
        sums = tf.matmul(onehot, z_e, transpose_a=True)
        means = tf.where(counts > 0, sums / tf.maximum(counts, 1.0), self.embeddings)
        self.embeddings.assign(self.decay * self.embeddings + (1 - self.decay) * means)


class StructureTokenDecoder(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(64, activation="relu")
        self.out = layers.Dense(FEAT)

    def call(self, token_embeddings):
        return self.out(self.hidden(token_embeddings))


class StructureTokenizer(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = keras.Sequential(
            [layers.Dense(64, activation="relu"), layers.Dense(LATENT)], name="encoder")
        self.codebook = EMACodebook(CODES, LATENT, name="codebook")
        self.decoder = StructureTokenDecoder(name="decoder")

    def call(self, x):
        z_q, tokens = self.codebook(self.encoder(x))
        return self.decoder(z_q)

    def train_step(self, data):
        x = data
        with tf.GradientTape() as tape:
            z_e = self.encoder(x, training=True)
            z_q, tokens = self.codebook(z_e)
            recon = self.decoder(z_q, training=True)
            loss = tf.reduce_mean(tf.square(recon - x))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.codebook.ema_update(z_e, tokens)
        return {"loss": loss}


x = np.random.normal(size=(256, FEAT)).astype("float32")
model = StructureTokenizer()
model(x[:2])
model.compile(optimizer=keras.optimizers.Adam(1e-3))
enc_before = [w.numpy().copy() for w in model.encoder.trainable_weights]
history = model.fit(x, epochs=2, batch_size=64, verbose=0)
print("loss:", [round(v, 4) for v in history.history["loss"]])
print("encoder moved:", max(float(np.abs(w.numpy() - b).max())
                            for w, b in zip(model.encoder.trainable_weights, enc_before)))
