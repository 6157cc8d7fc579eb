"""Real-world control 909 (fixed twin of case 509).

Source: https://github.com/tensorflow/tensorflow/issues/26321
Fix: for a symmetric positive-definite matrix the matrix logarithm is
V diag(log e) V^T from `tf.linalg.eigh`, which is differentiable (the workaround
given in the report), so the log-Euclidean loss trains the whole network.
Setting: scientific ML (SPD-manifold regression), Keras 3 custom layer, eager GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(0)
tf.random.set_seed(0)
n_vox, n_dirs, b_value = 64, 12, 1.0


class CholeskyToSPD(layers.Layer):
    """Maps 6 unconstrained numbers to D = L L^T + eps I (symmetric positive definite)."""

    def call(self, p):
        d = tf.nn.softplus(p[:, :3]) + 1e-2
        zero = tf.zeros_like(d[:, 0])
        L = tf.stack([tf.stack([d[:, 0], zero, zero], -1),
                      tf.stack([p[:, 3], d[:, 1], zero], -1),
                      tf.stack([p[:, 4], p[:, 5], d[:, 2]], -1)], axis=1)
        return tf.matmul(L, L, transpose_b=True) + 1e-3 * tf.eye(3)


def spd_logm(D):
    e, v = tf.linalg.eigh(D)
    return tf.matmul(v * tf.math.log(e)[:, None, :], v, transpose_b=True)


def log_euclidean_loss(D_true, D_pred):
    log_pred = spd_logm(D_pred)
    log_true = spd_logm(D_true)
    return tf.reduce_mean(tf.reduce_sum(tf.square(log_pred - log_true), axis=[1, 2]))


A = np.random.randn(n_vox, 3, 3).astype("float32")
D_true = (A @ A.transpose(0, 2, 1) / 3.0 + 0.1 * np.eye(3)).astype("float32")
g = np.random.randn(n_dirs, 3).astype("float32")
g /= np.linalg.norm(g, axis=1, keepdims=True)
signals = np.exp(-b_value * np.einsum("ki,nij,kj->nk", g, D_true, g)).astype("float32")

model = keras.Sequential([keras.Input((n_dirs,)), layers.Dense(32, activation="tanh", name="hidden"),
                          layers.Dense(6, name="cholesky_params"), CholeskyToSPD(name="to_spd")], name="dti_net")
optimizer = keras.optimizers.Adam(1e-3)

with tf.GradientTape() as tape:
    D_pred = model(signals, training=True)
    loss = log_euclidean_loss(D_true, D_pred)
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("loss", float(loss))
