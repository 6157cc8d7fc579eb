"""Real-world case 511.

Source: https://github.com/tensorflow/tensorflow/issues/26404
Bug: a RealNVP normalizing flow whose coupling networks contain BatchNormalization
is trained by maximum likelihood (base log-density plus the log-det of the
couplings) in a custom loop, but the gradients are taken with respect to
`flow.variables`. That list also holds the BatchNorm moving mean/variance, which
are non-trainable statistics the loss never differentiates through, so their
gradients are None and Keras warns "Gradients do not exist for variables"
(the reporter saw the same Nones for BatchNorm in ResNet50 and was told
to use `trainable_variables`).
Setting: normalizing flow (RealNVP, log-det), Keras 3 subclassed model, eager GradientTape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(0)
tf.random.set_seed(0)


class AffineCoupling(layers.Layer):
    def __init__(self, mask, **kwargs):
        super().__init__(**kwargs)
        self.mask = tf.constant(mask, dtype="float32")
        self.st_net = keras.Sequential([layers.Dense(32, name="hidden"), layers.BatchNormalization(name="bn"),
                                        layers.ReLU(name="relu"), layers.Dense(2 * len(mask), name="st")],
                                       name="st_net")

    def call(self, x, training=False):
        x_fixed = x * self.mask
        s, t = tf.split(self.st_net(x_fixed, training=training), 2, axis=-1)
        s = tf.tanh(s) * (1.0 - self.mask)
        y = x_fixed + (1.0 - self.mask) * (x * tf.exp(s) + t)
        return y, tf.reduce_sum(s, axis=-1)


class RealNVP(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.couplings = [AffineCoupling([1.0, 0.0] if k % 2 == 0 else [0.0, 1.0], name=f"coupling_{k}")
                          for k in range(4)]

    def call(self, x, training=False):
        log_det = tf.zeros(tf.shape(x)[:1])
        for coupling in self.couplings:
            x, ld = coupling(x, training=training)
            log_det += ld
        return x, log_det


theta = np.random.uniform(0, np.pi, 256)
data = np.stack([np.cos(theta), np.sin(theta)], 1) + 0.05 * np.random.randn(256, 2)
data = data.astype("float32")
flow = RealNVP(name="realnvp")
flow(data[:2])
optimizer = keras.optimizers.Adam(1e-3)

for step in range(3):
    with tf.GradientTape() as tape:
        z, log_det = flow(data, training=True)
        log_pz = -0.5 * tf.reduce_sum(tf.square(z), axis=-1) - np.log(2.0 * np.pi)
        nll = -tf.reduce_mean(log_pz + log_det)
    grads = tape.gradient(nll, flow.variables)
    optimizer.apply_gradients(zip(grads, flow.variables))
    print("step", step, "nll", float(nll))
