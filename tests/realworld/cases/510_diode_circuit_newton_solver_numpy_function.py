"""Real-world case 510.

Source: https://github.com/tensorflow/tensorflow/issues/53805
Bug: a physics-informed circuit model. A small network predicts the
temperature-dependent series resistance of a diode circuit; the implicit diode
equation i = I_s (exp((v - i r) / V_t) - 1) is then solved for the current with a
NumPy Newton solver wrapped in `tf.numpy_function`, and a sensor head maps the
current to the measured signal. numpy_function has no gradient, so the
resistance network behind the solver never gets one (as the reporter found when
wrapping scipy's fsolve the same way): Keras warns that gradients do not exist
for it and only the sensor head trains.
Setting: scientific ML (physics-informed circuit), Keras 3 custom layer, model.fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(0)
tf.random.set_seed(0)
I_S, V_T = 1e-3, 0.025  # diode saturation current [A], thermal voltage [V]


def solve_diode_current(v, r):
    """Newton iterations on f(i) = I_S * (exp((v - i r) / V_T) - 1) - i, in NumPy."""
    i = np.zeros_like(v)
    for _ in range(40):
        e = I_S * np.exp((v - i * r) / V_T)
        i = i - (e - I_S - i) / (-e * r / V_T - 1.0)
    return i.astype(np.float32)


class DiodeCircuit(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.resistance_net = keras.Sequential([layers.Dense(16, activation="tanh", name="r_hidden"),
                                                layers.Dense(1, activation="softplus", name="r_out")],
                                               name="resistance_net")

    def call(self, inputs):
        v, temperature = inputs[:, :1], inputs[:, 1:]
        r = 1.0 + 10.0 * self.resistance_net(temperature)
        i = tf.numpy_function(solve_diode_current, [v, r], tf.float32)
        i.set_shape(v.shape)
        return tf.concat([i, temperature], axis=-1)


v = np.random.uniform(0.0, 0.3, size=(256, 1)).astype("float32")
temperature = np.random.uniform(-1.0, 1.0, size=(256, 1)).astype("float32")
x = np.concatenate([v, temperature], axis=1)
y = solve_diode_current(v, 2.0 + 3.0 * (1.0 + temperature)) * 10.0

model = keras.Sequential([keras.Input((2,)), DiodeCircuit(name="circuit"),
                          layers.Dense(8, activation="tanh", name="sensor_hidden"),
                          layers.Dense(1, name="sensor_out")], name="diode_model")
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(x, y, epochs=2, batch_size=64, verbose=0)
print("loss", history.history["loss"])
