"""Real-world control 910 (fixed twin of case 510).

Source: https://github.com/tensorflow/tensorflow/issues/53805
Fix: the Newton iterations are written with TensorFlow ops inside the layer, so
the solve is unrolled on the tape and the current is differentiable with respect
to the predicted resistance; the resistance network and the sensor head both train.
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
    """Newton iterations on f(i) = I_S * (exp((v - i r) / V_T) - 1) - i, with TF ops."""
    i = tf.zeros_like(v)
    for _ in range(40):
        e = I_S * tf.exp((v - i * r) / V_T)
        i = i - (e - I_S - i) / (-e * r / V_T - 1.0)
    return i


class DiodeCircuit(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.resistance_net = keras.Sequential([layers.Dense(16, activation="tanh", name="r_hidden"),
                                                layers.Dense(1, activation="softplus", name="r_out")],
                                               name="resistance_net")

    def call(self, inputs):
        v, temperature = inputs[:, :1], inputs[:, 1:]
        r = 1.0 + 10.0 * self.resistance_net(temperature)
        i = solve_diode_current(v, r)
        return tf.concat([i, temperature], axis=-1)


v = np.random.uniform(0.0, 0.3, size=(256, 1)).astype("float32")
temperature = np.random.uniform(-1.0, 1.0, size=(256, 1)).astype("float32")
x = np.concatenate([v, temperature], axis=1)
y = solve_diode_current(v, 2.0 + 3.0 * (1.0 + temperature)).numpy() * 10.0

model = keras.Sequential([keras.Input((2,)), DiodeCircuit(name="circuit"),
                          layers.Dense(8, activation="tanh", name="sensor_hidden"),
                          layers.Dense(1, name="sensor_out")], name="diode_model")
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(x, y, epochs=2, batch_size=64, verbose=0)
print("loss", history.history["loss"])
