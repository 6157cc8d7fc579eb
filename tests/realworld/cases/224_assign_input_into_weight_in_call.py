"""Real-world case 224.

Source: https://github.com/tensorflow/tensorflow/issues/54532
Bug: to evaluate a log-posterior at a proposed parameter value for
Hamiltonian Monte Carlo, the model's call() writes the proposal x into its
weight with self.w.assign(x) and computes the density from self.w; assignment
is not differentiable, so the gradient with respect to x is None and HMC
cannot run.
Setting: subclassed Keras 3 model, eager GradientTape on a watched input.
"""
import tensorflow as tf
import keras


class DummyModel(keras.Model):
    def __init__(self):
        super().__init__()

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(), dtype="float64", initializer="zeros")

    def call(self, x):
        self.w.assign(x)
        return -0.5 * self.w ** 2


model = DummyModel()


def log_posterior(x):
    return model(x)


x = tf.constant(1.5, dtype=tf.float64)
with tf.GradientTape() as tape:
    tape.watch(x)
    lp = log_posterior(x)
print("d log_posterior / dx:", tape.gradient(lp, x))
