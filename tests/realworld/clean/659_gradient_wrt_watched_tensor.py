"""Clean control 659 (look-alike of case 259).

Source: https://github.com/tensorflow/tensorflow/issues/29942
The same computation with the intermediate tensor watched by the tape before
it is used, so tape.gradient(z, x) is 1.
Setting: eager GradientTape, a gradient asked for a watched tensor.
"""
import tensorflow as tf

x0 = tf.Variable(0.5, name="x0")
x1 = tf.constant(3.0)
x = x0 + x1
y = tf.constant(4.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    z = x + y
tape_grad = tape.gradient(z, x)
assert tape_grad is not None
