"""Clean control 658 (look-alike of case 258).

Source: https://github.com/tensorflow/tensorflow/issues/14894
The same histogram-matching loss with a soft histogram: each value adds a
triangular kernel to the neighbouring bins, so the bin heights are
differentiable in the values and both variables are optimised.
Setting: two tf.Variables optimised directly, eager GradientTape loop.
"""
import keras
import tensorflow as tf

input1 = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="input1")
input2 = tf.Variable([2.0, 3.0, 4.0, 6.0, 8.0, 9.0], name="input2")
centers = tf.linspace(0.0, 10.0, 11)
optimizer = keras.optimizers.Adam(0.001)


def soft_histogram(values):
    return tf.reduce_sum(tf.nn.relu(1.0 - tf.abs(values[:, None] - centers[None, :])), axis=0)


for step in range(3):
    with tf.GradientTape() as tape:
        source_hist = soft_histogram(input1)
        template_hist = soft_histogram(input2)
        loss = 2 * tf.nn.l2_loss(source_hist - template_hist)
    grads = tape.gradient(loss, [input1, input2])
    assert all(g is not None for g in grads)
    optimizer.apply_gradients(zip(grads, [input1, input2]))
