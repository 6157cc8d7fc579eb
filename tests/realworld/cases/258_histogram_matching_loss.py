"""Real-world case 258.

Source: https://github.com/tensorflow/tensorflow/issues/14894
Bug: a histogram-matching loss built with tf.histogram_fixed_width: the op
returns integer bin counts and has no gradient, so neither variable gets one
and the optimizer raises "No gradients provided for any variable".
Setting: two tf.Variables optimised directly, eager GradientTape loop
(modernised from the TF1 session code of the report).
"""
import keras
import tensorflow as tf

input1 = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="input1")
input2 = tf.Variable([2.0, 3.0, 4.0, 6.0, 8.0, 9.0], name="input2")
values_range = tf.constant([0.0, 10.0], dtype=tf.float32)
optimizer = keras.optimizers.Adam(0.001)

for step in range(3):
    with tf.GradientTape() as tape:
        source_hist = tf.histogram_fixed_width(input1, values_range, 11)
        template_hist = tf.histogram_fixed_width(input2, values_range, 11)
        source_hist = tf.cast(source_hist, tf.float32)
        template_hist = tf.cast(template_hist, tf.float32)
        loss = 2 * tf.nn.l2_loss(source_hist - template_hist)
    grads = tape.gradient(loss, [input1, input2])
    optimizer.apply_gradients(zip(grads, [input1, input2]))
    print("input1_value", input1.numpy())
