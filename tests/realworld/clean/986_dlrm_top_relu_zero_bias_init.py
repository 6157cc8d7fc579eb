"""Clean control 986 (expected clean).

Source: https://github.com/facebookresearch/dlrm/pull/358 (fixed form)
create_mlp initialises the biases to zeros (standard Xavier/Glorot practice)
instead of N(0, sqrt(1/m)), so the 1-unit ReLU output of the top MLP is alive
on part of the batch and every weight of the model trains.
Setting: subclassed Keras model (bottom/top MLP, embedding bags, dot
interaction) with a custom train_step, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def create_mlp(ln, sigmoid_layer, rng):
    mlp = []
    for i in range(len(ln) - 1):
        n, m = int(ln[i]), int(ln[i + 1])
        dense = layers.Dense(m)
        dense.build((None, n))
        W = rng.normal(0.0, np.sqrt(2.0 / (m + n)), size=(n, m)).astype(np.float32)
        bt = np.zeros(m, dtype=np.float32)
        dense.set_weights([W, bt])
        mlp.append((dense, "sigmoid" if i == sigmoid_layer else "relu"))
    return mlp


class DLRM(keras.Model):
    def __init__(self, m_spa, ln_emb, ln_bot, ln_top, sigmoid_bot=-1, sigmoid_top=-1, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.emb_l = [layers.Embedding(n, m_spa, embeddings_initializer=keras.initializers.RandomUniform(
            -np.sqrt(1 / n), np.sqrt(1 / n))) for n in ln_emb]
        self.bot_l = create_mlp(ln_bot, sigmoid_bot, rng)
        self.top_l = create_mlp(ln_top, sigmoid_top, rng)
        for i, (dense, _) in enumerate(self.bot_l + self.top_l):
            setattr(self, "mlp_dense_%d" % i, dense)

    def apply_mlp(self, x, mlp):
        for dense, act in mlp:
            z = dense(x)
            x = tf.nn.sigmoid(z) if act == "sigmoid" else tf.nn.relu(z)
        return x

    def interact_features(self, x, ly):
        T = tf.stack([x] + ly, axis=1)
        Z = tf.matmul(T, T, transpose_b=True)
        n = len(ly) + 1
        li, lj = np.tril_indices(n, k=-1)
        Zflat = tf.gather(tf.reshape(Z, [-1, n * n]), li * n + lj, axis=1)
        return tf.concat([x, Zflat], axis=1)

    def call(self, inputs):
        dense_x, lS_i = inputs
        x = self.apply_mlp(dense_x, self.bot_l)
        ly = [tf.reduce_sum(emb(lS_i[:, k, :]), axis=1) for k, emb in enumerate(self.emb_l)]
        z = self.interact_features(x, ly)
        return self.apply_mlp(z, self.top_l)

    def train_step(self, data):
        (dense_x, lS_i), T = data
        with tf.GradientTape() as tape:
            Z = self((dense_x, lS_i))
            E = self.loss_fn(T, Z)
        grads = tape.gradient(E, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"mse": E}


rng = np.random.default_rng(0)
n_samples, ln_emb, m_spa = 512, [100, 100, 100], 16
dense_x = np.log1p(rng.poisson(3.0, size=(n_samples, 13))).astype("float32")
lS_i = rng.integers(0, 100, size=(n_samples, len(ln_emb), 2))
T = (dense_x.sum(axis=1, keepdims=True) > np.median(dense_x.sum(axis=1))).astype("float32")

dlrm = DLRM(m_spa, ln_emb, ln_bot=[13, 64, 16], ln_top=[16 + 6, 64, 1])
dlrm.loss_fn = keras.losses.MeanSquaredError()
dlrm.compile(optimizer=keras.optimizers.SGD(0.05))
dlrm.fit((dense_x, lS_i), T, batch_size=128, epochs=4, verbose=0)
