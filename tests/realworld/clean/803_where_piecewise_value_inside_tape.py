"""Clean control 803 (look-alike of case 403).

Source: https://github.com/tensorflow/tensorflow/issues/115116
tf.where with a comparison as its condition, inside the tape: the condition
is not differentiable but both branches are, so x gets [2x, 1, 2x] as its
gradient. A linter must not flag the comparison.
"""
import tensorflow as tf

x = tf.Variable([-1.0, 2.0, -3.0], name="x")

with tf.GradientTape() as tape:
    y = tf.where(x > 0, x, x * x)
    loss = tf.reduce_sum(y)

grad = tape.gradient(loss, x)
print("y:", y.numpy())
print("grad:", grad.numpy())
