"""Clean control 802 (look-alike of case 402).

Source: https://github.com/tensorflow/tensorflow/issues/51489
The same tf.Module layer and v1 optimizer, with the layer applied inside the
loss callable, so minimize's tape records it.
"""
import tensorflow as tf


class Dense(tf.Module):
    def __init__(self, input_dim, output_size, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([input_dim, output_size], seed=0), name="w")
        self.b = tf.Variable(tf.zeros([output_size]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


layer = Dense(2, 4)


def loss_fn():
    y_true = tf.ones([1, 4])
    output = layer([[7.0, 3.0]])
    return tf.reduce_mean(tf.square(y_true - output))


optimizer = tf.compat.v1.train.AdamOptimizer(0.4)
for i in range(3):
    optimizer.minimize(loss_fn, var_list=layer.trainable_variables)
    print(i, float(loss_fn()))
