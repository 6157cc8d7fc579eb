"""Real-world case 403.

Source: https://github.com/tensorflow/tensorflow/issues/115116
Bug: "tf.where returns None gradient for differentiable expression". The
follow-up pull request (tensorflow/tensorflow#115258) names the actual
mistake: "the issue was that I was building the target outside GradientTape".
The piecewise value tf.where(x > 0, x, x * x) is computed before the tape
opens; only its sum is recorded, so d loss / d x is None, silently.
Setting: eager, tf.Variable parameter, piecewise penalty.
"""
import tensorflow as tf

x = tf.Variable([-1.0, 2.0, -3.0], name="x")
y = tf.where(x > 0, x, x * x)

with tf.GradientTape() as tape:
    loss = tf.reduce_sum(y)

grad = tape.gradient(loss, x)
print("y:", y.numpy())
print("grad:", grad)
