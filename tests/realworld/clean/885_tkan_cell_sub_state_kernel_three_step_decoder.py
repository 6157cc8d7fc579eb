"""Real-world case 885 (control for 485).

Source: https://github.com/remigenet/TKAT/issues/8
Fix: the decoder forecasts a three-step horizon, so the sub-layer states written at
one step (through sub_tkan_kernel) are read by the next step and every variable of
the decoder cell reaches the loss. Same TKAN cell as tkan/tkan.py (Dense sub-layers
in place of KANLinear), run eagerly like the reporter's torch backend.
Setting: Keras 3 custom RNN cell (multiple states, sub-layers built in build) wrapped
in keras.layers.RNN, functional encoder/decoder with initial_state, model.fit with
run_eagerly=True.
"""
import numpy as np
import keras
from keras import ops

keras.utils.set_random_seed(0)
PAST, AHEAD, FEATURES, UNITS = 6, 3, 3, 8


class TKANCell(keras.layers.Layer):
    def __init__(self, units, n_sub=2, sub_dim=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.n_sub = n_sub
        self.sub_dim = sub_dim
        self.state_size = [units, units] + [sub_dim] * n_sub
        self.output_size = units

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(shape=(input_dim, self.units * 3), name="kernel")
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units * 3), name="recurrent_kernel", initializer="orthogonal")
        self.bias = self.add_weight(shape=(self.units * 3,), name="bias", initializer="zeros")
        self.tkan_sub_layers = []
        for i in range(self.n_sub):
            layer = keras.layers.Dense(self.sub_dim, activation="tanh", name=f"sub_layer_{i}")
            layer.build((None, self.sub_dim))
            self.tkan_sub_layers.append(layer)
        self.sub_tkan_kernel = self.add_weight(
            shape=(self.n_sub, self.sub_dim * 2), name="sub_tkan_kernel")
        self.sub_tkan_recurrent_kernel_inputs = self.add_weight(
            shape=(self.n_sub, input_dim, self.sub_dim), name="sub_tkan_recurrent_kernel_inputs")
        self.sub_tkan_recurrent_kernel_states = self.add_weight(
            shape=(self.n_sub, self.sub_dim, self.sub_dim), name="sub_tkan_recurrent_kernel_states")
        self.aggregated_weight = self.add_weight(
            shape=(self.n_sub * self.sub_dim, self.units), name="aggregated_weight")
        self.aggregated_bias = self.add_weight(
            shape=(self.units,), name="aggregated_bias", initializer="zeros")

    def call(self, inputs, states, training=None):
        h_tm1, c_tm1 = states[0], states[1]
        sub_states = states[2:]
        gates = ops.matmul(inputs, self.kernel) + ops.matmul(h_tm1, self.recurrent_kernel) + self.bias
        i, f, c = ops.split(ops.sigmoid(gates), 3, axis=-1)
        c = f * c_tm1 + i * ops.tanh(c)
        sub_outputs, new_sub_states = [], []
        for idx, (sub_layer, sub_state) in enumerate(zip(self.tkan_sub_layers, sub_states)):
            agg_input = (inputs @ self.sub_tkan_recurrent_kernel_inputs[idx]
                         + sub_state @ self.sub_tkan_recurrent_kernel_states[idx])
            sub_output = sub_layer(agg_input)
            kernel_h, kernel_x = ops.split(self.sub_tkan_kernel[idx], 2, axis=0)
            new_sub_state = kernel_h * sub_output + sub_state * kernel_x
            sub_outputs.append(sub_output)
            new_sub_states.append(new_sub_state)
        aggregated = ops.concatenate(sub_outputs, axis=-1)
        o = ops.sigmoid(ops.matmul(aggregated, self.aggregated_weight) + self.aggregated_bias)
        h = o * ops.tanh(c)
        return h, [h, c] + new_sub_states


past = keras.Input((PAST, FEATURES), name="past")
future = keras.Input((AHEAD, FEATURES), name="future_known")
encoder = keras.layers.RNN(TKANCell(UNITS, name="encoder_cell"), return_state=True, name="encoder")
enc_out, *enc_states = encoder(past)
decoder = keras.layers.RNN(TKANCell(UNITS, name="decoder_cell"), return_sequences=True, name="decoder")
dec_out = decoder(future, initial_state=enc_states)
forecast = keras.layers.Dense(1, name="head")(dec_out)
model = keras.Model([past, future], forecast)
model.compile(optimizer="adam", loss="mse", run_eagerly=True)

n = 32
x_past = np.random.normal(size=(n, PAST, FEATURES)).astype("float32")
x_future = np.random.normal(size=(n, AHEAD, FEATURES)).astype("float32")
y = np.random.normal(size=(n, AHEAD, 1)).astype("float32")
history = model.fit([x_past, x_future], y, batch_size=16, epochs=1, verbose=0)
print("loss", history.history["loss"])
