"""Real-world case 261.

Source: https://stackoverflow.com/questions/59726491
Bug: a custom layer builds its mixing matrix `self.m` from its weights with
tf.gather/tf.concat inside build(); build runs once, so `m` is a constant
snapshot and call() never reads `self.w` again: fit warns "Gradients do not
exist for variables ['.../weights']" while the offset still trains.
Setting: Keras 3 custom layer with add_weight in build(), Sequential model,
model.fit.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class GatherLayer(keras.layers.Layer):
    def __init__(self, activation="linear", **kwargs):
        super().__init__(**kwargs)
        self.activation = keras.activations.get(activation)

    def build(self, _):
        self.w = self.add_weight(shape=(2,), name="weights", initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(1,), name="offset", initializer="random_normal", trainable=True)
        self.m = tf.concat([tf.reshape(tf.gather(self.w, ix), (-1, 1)) for ix in [[0, 1], [1, 0]]], axis=-1)

    def call(self, inputs):
        lin = tf.matmul(inputs, self.m) + self.b
        return self.activation(lin)


def gen_data():
    x = np.random.normal(size=(32, 2)).astype("float32")
    y = np.stack([0.3 * x[:, 0] + 0.7 * x[:, 1], 0.7 * x[:, 0] + 0.3 * x[:, 1]], axis=-1)
    return x, y


model = keras.Sequential([keras.Input((2,)), GatherLayer()])
model.compile(optimizer="adam", loss="mse")
x, y = gen_data()
model.fit(x, y, epochs=1, batch_size=8, verbose=0)
