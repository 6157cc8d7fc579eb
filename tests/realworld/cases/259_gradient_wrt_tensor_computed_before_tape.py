"""Real-world case 259.

Source: https://github.com/tensorflow/tensorflow/issues/29942
Bug: `x = x0 + x1` is computed before the tape opens and is a plain tensor,
not a variable; the tape never watched it, so tape.gradient(z, x) returns
None although z = x + y depends on x (the report expected 1, as
tf.gradients gives in graph mode).
Setting: eager GradientTape, a gradient asked for an intermediate tensor
(modernised from the tf.get_variable code of the report).
"""
import tensorflow as tf

x0 = tf.Variable(0.5, name="x0")
x1 = tf.constant(3.0)
x = x0 + x1
y = tf.constant(4.0)
with tf.GradientTape() as tape:
    z = x + y
tape_grad = tape.gradient(z, x)
print(tape_grad)
