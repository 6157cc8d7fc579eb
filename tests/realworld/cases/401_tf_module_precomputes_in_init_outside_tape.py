"""Real-world case 401.

Source: https://github.com/tensorflow/tensorflow/issues/39996
Bug: a tf.Module turns its parameter into the quantity it uses (here softplus
weights) once, in __init__, before any GradientTape exists; `fun` only reads
the precomputed tensor. The maintainer: "the issue is that you're doing
computation in __init__ but not wrapping that in the GradientTape call". The
gradient w.r.t. the variable is None.
Setting: plain tf.Module, eager, tf.Variable parameter, SGD by hand.
"""
import tensorflow as tf


class Scaled(tf.Module):
    def __init__(self, phi):
        super().__init__()
        self.scale = tf.nn.softplus(phi)

    def fun(self, x):
        return tf.reduce_sum(self.scale * x)


phi = tf.Variable(tf.zeros(5), name="phi")
m = Scaled(phi)
x = tf.ones(5)
with tf.GradientTape() as tape:
    res = m.fun(x)
grad = tape.gradient(res, phi)
print("d res / d phi:", grad)
