"""Clean control 972 (expected clean).

Look-alike of case 572: the hand-written GRU cell creates only the weights
that call() uses (the stray "interim" weight is removed), so every weight of
the cell, the RNN and the head gets a gradient.
Setting: custom RNN cell (build/call) inside keras.layers.RNN in a subclassed keras.Model, model.fit().
"""
import numpy as np
import keras
from keras import layers, ops


class MyGRU(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.dim = input_shape[-1]
        self.w_r = self.add_weight(shape=(self.dim + self.units, self.units), initializer="uniform", name="reset_gate")
        self.b_r = self.add_weight(shape=(self.units,), initializer="zeros", name="reset_gate_bias")
        self.w_z = self.add_weight(shape=(self.dim + self.units, self.units), initializer="uniform", name="update_gate")
        self.b_z = self.add_weight(shape=(self.units,), initializer="zeros", name="update_gate_bias")
        self.w_h = self.add_weight(shape=(self.dim + self.units, self.units), initializer="uniform", name="candidate")
        self.b_h = self.add_weight(shape=(self.units,), initializer="zeros", name="candidate_bias")

    def call(self, inputs, states):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        x_h = ops.concatenate([inputs, h_prev], axis=-1)
        r = ops.sigmoid(ops.matmul(x_h, self.w_r) + self.b_r)
        z = ops.sigmoid(ops.matmul(x_h, self.w_z) + self.b_z)
        x_rh = ops.concatenate([inputs, r * h_prev], axis=-1)
        h_tilde = ops.tanh(ops.matmul(x_rh, self.w_h) + self.b_h)
        h = z * h_prev + (1 - z) * h_tilde
        return h, [h]


class Regressor(keras.Model):
    def __init__(self, units=16):
        super().__init__()
        self.rnn = layers.RNN(MyGRU(units, name="my_gru"), name="rnn")
        self.head = layers.Dense(1, name="head")

    def call(self, inputs):
        return self.head(self.rnn(inputs))


x = np.random.rand(256, 12, 3).astype("float32")
y = x.sum(axis=(1, 2))[:, None].astype("float32") / 10.0
model = Regressor()
model.compile(optimizer="adam", loss="mse")
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
