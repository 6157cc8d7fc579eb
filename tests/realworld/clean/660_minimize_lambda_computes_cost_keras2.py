"""Clean control 660 (look-alike of case 260).

Source: https://github.com/tensorflow/tensorflow/issues/42167
The fix from the thread: the computation is inside the lambda, so
Optimizer.minimize records it on its tape and `dd` gets a gradient.
Setting: Keras 2 (tf_keras) optimizer, Optimizer.minimize with a callable
loss and var_list, eager.
"""
import tensorflow as tf

y_N = tf.Variable([1.0, 2.0, 3.0], name="dd")

loss = lambda: -tf.reduce_mean(input_tensor=tf.reduce_sum(input_tensor=tf.math.log(y_N), axis=0))

train_step = tf.keras.optimizers.Adam(0.5).minimize(loss, var_list=[y_N])
print("dd:", y_N.numpy())
