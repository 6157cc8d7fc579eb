"""Real-world case 409.

Source: https://github.com/keras-team/keras/issues/12521
Bug: a custom graph-convolution layer meant to compute AV = A . Vin and
Vout = AV . W; training raises "An operation has `None` for gradient". The
answer in the thread: "Does your code have any weights that were defined but
left unused? ... since it is not being used, its gradient can not be computed".
Here the layer creates a learnable adjacency A with add_weight but call() uses
the fixed adjacency passed to the constructor, so A gets no gradient (Keras 3
warns "Gradients do not exist").
Setting: Keras 3 functional model, model.fit under tf.distribute.MirroredStrategy
on two logical CPU devices.
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
        self.adjacency = tf.constant(adjacency, tf.float32)

    def build(self, input_shape):
        self.A = self.add_weight(shape=(N, N), initializer="identity", name="A")
        self.W = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="W")

    def call(self, v_in):
        av = tf.einsum("nm,bmc->bnc", self.adjacency, v_in)
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
