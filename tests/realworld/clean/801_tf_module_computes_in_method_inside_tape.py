"""Clean control 801 (look-alike of case 401).

Source: https://github.com/tensorflow/tensorflow/issues/39996
The module keeps the variable and applies softplus inside `fun`, which runs
under the tape: the variable gets its gradient.
"""
import tensorflow as tf


class Scaled(tf.Module):
    def __init__(self, phi):
        super().__init__()
        self.phi = phi

    def fun(self, x):
        return tf.reduce_sum(tf.nn.softplus(self.phi) * x)


phi = tf.Variable(tf.zeros(5), name="phi")
m = Scaled(phi)
x = tf.ones(5)
with tf.GradientTape() as tape:
    res = m.fun(x)
grad = tape.gradient(res, phi)
print("d res / d phi:", grad.numpy())
