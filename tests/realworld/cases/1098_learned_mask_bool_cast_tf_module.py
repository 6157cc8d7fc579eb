"""Real-world case 1098.

Source: https://stackoverflow.com/questions/52639165
Bug: a tf.Module layer learns which weights to keep through a score tensor
and turns it into a 0/1 mask with tf.cast(tf.cast(scores, tf.bool),
tf.float32), as in the question. Casting to bool and back has no gradient,
so the mask scores never get one: tape.gradient returns None for them and
Keras's optimizer warns that gradients do not exist; only the dense weight
and bias train.
Setting: tf.Module with tf.Variables, tf.experimental.numpy ops, eager custom training loop, Keras 3 optimizer.
"""
import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp
import keras


class MaskedDense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        init = tf.random.stateless_normal([n_in, n_out], seed=[0, 1]) * 0.3
        self.w = tf.Variable(init, name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")
        self.scores = tf.Variable(tf.random.stateless_uniform([n_in, n_out], seed=[0, 2]), name="scores")

    def __call__(self, x):
        mask = tf.cast(tf.cast(tf.nn.relu(self.scores - 0.5), tf.bool), tf.float32)
        return tnp.matmul(x, self.w * mask) + self.b


tf.random.set_seed(0)
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8)).astype("float32")
y = (x[:, :4].sum(axis=1, keepdims=True) > 0).astype("float32")

layer = MaskedDense(8, 1, name="masked_dense")
optimizer = keras.optimizers.SGD(0.1)
for step in range(5):
    with tf.GradientTape() as tape:
        logits = layer(x)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, layer.trainable_variables)
    optimizer.apply_gradients(zip(grads, layer.trainable_variables))
print({v.name: g is None for v, g in zip(layer.trainable_variables, grads)})
print("loss", float(loss))
