"""Real-world case 488.

Source: https://github.com/tensorflow/tensorflow/issues/29367
Bug: a tf.Module Gaussian-process kernel stores an unconstrained variable and turns it
into the positive lengthscale with tf.nn.softplus in __init__. Under eager execution
that transform runs once, at construction, and self.lengthscale is a plain tensor
holding its value: "there are no links between TensorFlow tensors anymore" (the
report). The marginal likelihood uses the stale tensor, so the GradientTape never
sees raw_lengthscale and its gradient is None; the lengthscale is never fitted
while the variance and noise (transformed at call time) are.
Setting: TF2 tf.Module model (kernel submodule + GP regression module), eager
GradientTape loop with a Keras 3 optimizer, float64 Cholesky marginal likelihood.
"""
import numpy as np
import tensorflow as tf
import keras

np.random.seed(0)


def inverse_softplus(y):
    return float(np.log(np.expm1(y)))


class RBFKernel(tf.Module):
    def __init__(self, lengthscale=1.0, variance=1.0, name=None):
        super().__init__(name=name)
        self.raw_lengthscale = tf.Variable(inverse_softplus(lengthscale), dtype=tf.float64,
                                           name="raw_lengthscale")
        self.raw_variance = tf.Variable(inverse_softplus(variance), dtype=tf.float64,
                                        name="raw_variance")
        self.lengthscale = tf.nn.softplus(self.raw_lengthscale)

    @property
    def variance(self):
        return tf.nn.softplus(self.raw_variance)

    def __call__(self, x1, x2):
        a, b = x1 / self.lengthscale, x2 / self.lengthscale
        d2 = (tf.reduce_sum(a ** 2, 1)[:, None] + tf.reduce_sum(b ** 2, 1)[None, :]
              - 2.0 * tf.matmul(a, b, transpose_b=True))
        return self.variance * tf.exp(-0.5 * d2)


class GPRegression(tf.Module):
    def __init__(self, x, y, kernel, name=None):
        super().__init__(name=name)
        self.x, self.y, self.kernel = x, y, kernel
        self.raw_noise = tf.Variable(inverse_softplus(0.1), dtype=tf.float64, name="raw_noise")

    def neg_log_marginal_likelihood(self):
        n = tf.shape(self.x)[0]
        k = self.kernel(self.x, self.x) + tf.nn.softplus(self.raw_noise) * tf.eye(n, dtype=tf.float64)
        chol = tf.linalg.cholesky(k)
        alpha = tf.linalg.cholesky_solve(chol, self.y)
        return (0.5 * tf.reduce_sum(self.y * alpha)
                + tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol))))


x = np.random.uniform(-3, 3, (40, 1))
y = np.sin(2.0 * x) + np.random.normal(0, 0.1, x.shape)
gp = GPRegression(tf.constant(x), tf.constant(y), RBFKernel(lengthscale=2.0))
optimizer = keras.optimizers.Adam(0.05)

for step in range(5):
    with tf.GradientTape() as tape:
        loss = gp.neg_log_marginal_likelihood()
    variables = gp.trainable_variables
    grads = tape.gradient(loss, variables)
    none = [v.name for v, g in zip(variables, grads) if g is None]
    if none:
        print("None gradients for:", none)
    optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
    print("step", step, "nlml", float(loss))
