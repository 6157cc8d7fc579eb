"""Clean control 724 (look-alike of case 324).

Source: https://github.com/tensorflow/tensorflow/issues/38349
The same two-regime scale, with the exponent clipped before the branch that would overflow
(the double tf.where idea): every branch is finite.
"""
import keras
import tensorflow as tf

log_scale = tf.Variable(10.0, name="log_scale")
optimizer = keras.optimizers.SGD(0.01)
target = tf.constant(12.0)
for step in range(3):
    with tf.GradientTape() as tape:
        scale = tf.where(log_scale < 15.0, log_scale, tf.math.pow(10.0, tf.math.exp(tf.minimum(log_scale, 3.0))))
        loss = tf.square(scale - target)
    grads = tape.gradient(loss, [log_scale])
    optimizer.apply_gradients(zip(grads, [log_scale]))
