"""Clean control 809 (look-alike of case 409).

Source: https://github.com/keras-team/keras/issues/12521
The same layer with call() using the learnable adjacency self.A (initialised
from the fixed one), so both weights train. MirroredStrategy on two logical
CPUs, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
keras.utils.set_random_seed(0)
N, C, F = 6, 3, 4


class GraphConv(keras.layers.Layer):
    def __init__(self, units, adjacency, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.adjacency = adjacency

    def build(self, input_shape):
        self.A = self.add_weight(shape=(N, N), initializer=keras.initializers.Constant(self.adjacency), name="A")
        self.W = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="W")

    def call(self, v_in):
        av = tf.einsum("nm,bmc->bnc", self.A, v_in)
        return tf.einsum("bnc,cf->bnf", av, self.W)


adjacency = (np.random.rand(N, N) > 0.5).astype("float32")
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    inputs = keras.Input((N, C))
    h = GraphConv(F, adjacency, name="graph_conv")(inputs)
    outputs = keras.layers.Dense(1, name="readout")(keras.layers.GlobalAveragePooling1D()(h))
    model = keras.Model(inputs, outputs, name="gcn")
    model.compile(optimizer="adam", loss="mse")
x = np.random.rand(16, N, C).astype("float32")
y = np.random.rand(16, 1).astype("float32")
model.fit(x, y, batch_size=8, epochs=1, verbose=2)
