"""Clean control 631 (expected clean).

The nested LSTM cell of case 231 with the depth-0 input and hidden kernels
kept as separate weights in build() and concatenated inside call(), so every
step reads both variables.
Setting: Keras 2 (tf_keras), custom nested LSTM cell written with
tf.keras.backend ops in an RNN layer, functional model, compile() + fit().
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
from tensorflow.keras.layers import Dense, Input, Layer, RNN
from tensorflow.keras.models import Model

tf.random.set_seed(0)


class NestedLSTMCell(Layer):
    def __init__(self, units, depth, **kwargs):
        super(NestedLSTMCell, self).__init__(**kwargs)
        self.units = units
        self.depth = depth
        self.state_size = tuple([self.units] * (self.depth + 1))

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernels = []
        self.biases = []
        for i in range(self.depth):
            if i == 0:
                input_kernel = self.add_weight(shape=(input_dim, self.units * 4), name="input_kernel_%d" % (i + 1))
                hidden_kernel = self.add_weight(shape=(self.units, self.units * 4), name="kernel_%d" % (i + 1))
                kernel = (input_kernel, hidden_kernel)
            else:
                kernel = self.add_weight(shape=(self.units * 2, self.units * 4), name="kernel_%d" % (i + 1))
            self.kernels.append(kernel)
        for i in range(self.depth):
            self.biases.append(self.add_weight(shape=(self.units * 4,), name="bias_%d" % (i + 1), initializer="zeros"))
        self.built = True

    def call(self, inputs, states):
        h, c = self.nested_recurrence(inputs, states[0], states[1:self.depth + 1], 0)
        return h, c

    def nested_recurrence(self, inputs, hidden_state, cell_states, current_depth):
        c_state = cell_states[current_depth]
        ip = K.concatenate([inputs, hidden_state], axis=-1)
        kernel = self.kernels[current_depth]
        if isinstance(kernel, tuple):
            kernel = K.concatenate(list(kernel), axis=0)
        gate_inputs = K.bias_add(K.dot(ip, kernel), self.biases[current_depth])
        i = gate_inputs[:, :self.units]
        c = gate_inputs[:, self.units: 2 * self.units]
        f = gate_inputs[:, self.units * 2: self.units * 3]
        o = gate_inputs[:, self.units * 3:]
        inner_hidden = c_state * K.sigmoid(f)
        inner_input = K.sigmoid(i) + K.tanh(c)
        if current_depth == self.depth - 1:
            new_c = inner_hidden + inner_input
            new_cs = [new_c]
        else:
            new_c, new_cs = self.nested_recurrence(inner_input, inner_hidden, cell_states, current_depth + 1)
        new_h = K.tanh(new_c) * K.sigmoid(o)
        return new_h, [new_h] + new_cs


i = Input(shape=(10, 4), name="input_layer")
o = RNN(NestedLSTMCell(8, depth=2), return_sequences=True, name="lstm1")(i)
o = Dense(1)(o)
model = Model(i, o)
model.compile(optimizer="adam", loss="mse")
x = np.random.rand(32, 10, 4).astype("float32")
y = np.random.rand(32, 10, 1).astype("float32")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
