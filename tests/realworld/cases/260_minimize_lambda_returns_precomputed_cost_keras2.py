"""Real-world case 260.

Source: https://github.com/tensorflow/tensorflow/issues/42167
Bug: the cost is computed eagerly once, and `loss = lambda: cost` only
returns that finished tensor; Optimizer.minimize opens its tape when it
calls the lambda, after the cost was computed, so it raises "No gradients
provided for any variable: ['dd:0']".
Setting: Keras 2 (tf_keras) optimizer, Optimizer.minimize with a callable
loss and var_list, eager.
"""
import tensorflow as tf

y_N = tf.Variable([1.0, 2.0, 3.0], name="dd")
cost = -tf.reduce_mean(input_tensor=tf.reduce_sum(input_tensor=tf.math.log(y_N), axis=0))

loss = lambda: cost

train_step = tf.keras.optimizers.Adam(0.5).minimize(loss, var_list=[y_N])
