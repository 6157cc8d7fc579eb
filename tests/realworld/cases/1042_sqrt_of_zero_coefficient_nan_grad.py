"""Real-world case 1042.

Source: https://github.com/tensorflow/tensorflow/issues/4914
Bug: the objective contains `tf.sqrt(c * x)` terms where `x` is a trainable
tf.Variable and the constant `c` is sometimes exactly zero. The value
sqrt(0) = 0 is fine, so the loss is finite, but the gradient
0.5 * c / sqrt(c * x) is 0/0 = NaN for those entries and the first update
turns the rate variable into NaN.
Setting: tf.Variable parameters fitted with a Keras optimizer in a custom GradientTape loop.
"""
import numpy as np
import tensorflow as tf
import keras

rng = np.random.default_rng(0)
n_sites = 8
# per-site exposure; some sites were not exposed at all (exactly zero)
c = tf.constant(rng.uniform(0.5, 2.0, size=n_sites) * (rng.random(n_sites) > 0.3), tf.float32)
c = tf.tensor_scatter_nd_update(c, [[0]], [0.0])
true_rate = rng.uniform(0.5, 1.5, size=n_sites).astype("float32")
observed = tf.sqrt(c * true_rate) + 0.01 * rng.standard_normal(n_sites).astype("float32")

rate = tf.Variable(tf.ones([n_sites]), name="rate")
scale = tf.Variable(1.0, name="scale")
optimizer = keras.optimizers.Adam(learning_rate=0.05)


def objective():
    predicted = scale * tf.sqrt(c * rate)
    return tf.reduce_sum(tf.square(predicted - observed))


for step in range(20):
    with tf.GradientTape() as tape:
        loss = objective()
    grads = tape.gradient(loss, [rate, scale])
    optimizer.apply_gradients(zip(grads, [rate, scale]))
print("final loss", float(objective()))
