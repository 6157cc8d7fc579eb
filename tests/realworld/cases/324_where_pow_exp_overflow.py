"""Real-world case 324.

Source: https://github.com/tensorflow/tensorflow/issues/38349
Bug: "nan gradient when tf.where is used": tf.where(a < 15., a, tf.math.pow(10.0,
tf.math.exp(a))) with a = 10: the branch that is not taken overflows to inf, and the
gradient of a comes out NaN ("this behavior also happens when the generated value in the
inactive branch is not finite").
Setting: a scalar tf.Variable (a learnable scale with a different regime above 15), eager
custom loop with tf.keras optimiser.
"""
import keras
import tensorflow as tf

log_scale = tf.Variable(10.0, name="log_scale")
optimizer = keras.optimizers.SGD(0.01)
target = tf.constant(12.0)
for step in range(3):
    with tf.GradientTape() as tape:
        scale = tf.where(log_scale < 15.0, log_scale, tf.math.pow(10.0, tf.math.exp(log_scale)))
        loss = tf.square(scale - target)
    grads = tape.gradient(loss, [log_scale])
    optimizer.apply_gradients(zip(grads, [log_scale]))
