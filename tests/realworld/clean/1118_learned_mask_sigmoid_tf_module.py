"""Real-world control 1118 (twin of case 1098).

Source: https://stackoverflow.com/questions/52639165
Fixed: as the answer suggests, the hard 0/1 mask is replaced by a
soft threshold, a steep sigmoid of the scores, so the mask scores receive
gradients and train together with the weight and bias.
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
        mask = tf.sigmoid(10.0 * (self.scores - 0.5))
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
