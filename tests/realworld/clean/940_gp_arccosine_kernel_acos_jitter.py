"""Real-world control 940 (fixed twin of case 540).

Source: https://github.com/GPflow/GPflow/issues/409
Fix: as in GPflow's ArcCosine kernel after the report, the cosine is shrunk
into the open interval before the arccos, acos(jitter + (1 - 2 jitter) cos),
so the derivative of acos stays finite on the diagonal of K(X, X) and every
hyperparameter gets a finite gradient.
Setting: plain TensorFlow, tf.Module kernel inside a tf.Module GP model,
float64, keras optimizer, @tf.function training step.
"""
import math

import numpy as np
import tensorflow as tf
import keras

tf.random.set_seed(0)
rng = np.random.default_rng(0)


class ArcCosineKernel(tf.Module):
    """First-order arc-cosine kernel (Cho & Saul, 2009)."""

    def __init__(self, input_dim, name="arccos"):
        super().__init__(name=name)
        self.log_variance = tf.Variable(0.0, dtype=tf.float64, name="log_variance")
        self.log_weight_variances = tf.Variable(
            tf.zeros([input_dim], tf.float64), name="log_weight_variances")
        self.log_bias_variance = tf.Variable(0.0, dtype=tf.float64, name="log_bias_variance")

    def _weighted_products(self, X):
        w = tf.exp(self.log_weight_variances)
        b = tf.exp(self.log_bias_variance)
        full = tf.matmul(X * w, X, transpose_b=True) + b
        diag = tf.reduce_sum(w * tf.square(X), axis=-1) + b
        return full, diag

    def _angle(self, cos_theta):
        jitter = 1e-15
        return tf.acos(jitter + (1.0 - 2.0 * jitter) * cos_theta)

    def __call__(self, X):
        full, diag = self._weighted_products(X)
        norms = tf.sqrt(diag)
        cos_theta = full / norms[:, None] / norms[None, :]
        theta = self._angle(cos_theta)
        j = tf.sin(theta) + (math.pi - theta) * tf.cos(theta)
        return tf.exp(self.log_variance) / math.pi * j * norms[:, None] * norms[None, :]


class GPRegression(tf.Module):
    def __init__(self, kernel, name="gpr"):
        super().__init__(name=name)
        self.kernel = kernel
        self.log_noise = tf.Variable(math.log(0.1), dtype=tf.float64, name="log_noise")

    def neg_log_marginal_likelihood(self, X, y):
        n = tf.shape(X)[0]
        K = self.kernel(X) + tf.exp(self.log_noise) * tf.eye(n, dtype=tf.float64)
        L = tf.linalg.cholesky(K)
        alpha = tf.linalg.cholesky_solve(L, y)
        data_fit = 0.5 * tf.reduce_sum(y * alpha)
        complexity = tf.reduce_sum(tf.math.log(tf.linalg.diag_part(L)))
        return data_fit + complexity + 0.5 * tf.cast(n, tf.float64) * math.log(2.0 * math.pi)


X = rng.uniform(-1.0, 1.0, size=(40, 2))
Y = np.sin(3.0 * X[:, :1]) + 0.5 * X[:, 1:] + 0.05 * rng.normal(size=(40, 1))
X = tf.constant(X, tf.float64)
Y = tf.constant(Y, tf.float64)

gp = GPRegression(ArcCosineKernel(input_dim=2))
optimizer = keras.optimizers.Adam(learning_rate=0.05)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = gp.neg_log_marginal_likelihood(x, y)
    grads = tape.gradient(loss, gp.trainable_variables)
    optimizer.apply_gradients(zip(grads, gp.trainable_variables))
    return loss


for step in range(3):
    loss = train_step(X, Y)
    print(f"step {step}: -log p(y) = {float(loss):.4f}")
