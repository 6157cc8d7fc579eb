"""Clean control 682 (look-alike of case 282).

Source: https://stackoverflow.com/questions/78712449
Fix: the outer tape watches x as well (`tape2.watch(x)` at the top of its
block), so the first derivative it records is connected to x and
d(dpsi_dx)/dx is the second derivative; the Schrodinger residual and its loss
are computed from it. tanh keeps the second derivative non-zero (the report's
ReLU network would give zeros).
Setting: PINN, Keras 2 (tf_keras) Sequential network in float64, nested tapes
in @tf.function.
"""
import tensorflow as tf

tf.random.set_seed(0)


class QuantumPINNSolver:
    def __init__(self, potential_func):
        self.potential_func = potential_func
        self.model = self.build_model()

    def build_model(self):
        return tf.keras.Sequential([
            tf.keras.layers.Dense(32, activation="tanh", input_shape=(1,), dtype=tf.float64),
            tf.keras.layers.Dense(32, activation="tanh", dtype=tf.float64),
            tf.keras.layers.Dense(1, activation=None, dtype=tf.float64),
        ])

    @tf.function
    def derivatives(self, x):
        with tf.GradientTape(persistent=True) as tape2:
            tape2.watch(x)
            with tf.GradientTape(persistent=True) as tape1:
                tape1.watch(x)
                psi = self.model(x)
            dpsi_dx = tape1.gradient(psi, x)
        d2psi_dx2 = tape2.gradient(dpsi_dx, x)
        return psi, dpsi_dx, d2psi_dx2

    def schrodinger_loss(self, x, E):
        psi, dpsi_dx, d2psi_dx2 = self.derivatives(x)
        print("dpsi_dx:", dpsi_dx.shape, "d2psi_dx2:", d2psi_dx2)
        if d2psi_dx2 is None:
            return None
        V_x = self.potential_func(x)
        schrodinger_eq = -0.5 * d2psi_dx2 + (V_x - E) * psi
        return tf.reduce_mean(tf.square(schrodinger_eq))


def harmonic_oscillator_potential(x):
    return 0.5 * tf.square(x)


solver = QuantumPINNSolver(potential_func=harmonic_oscillator_potential)
x = tf.random.uniform((100, 1), minval=-5, maxval=5, dtype=tf.float64)
E = tf.constant(0.5, dtype=tf.float64)
loss = solver.schrodinger_loss(x, E)
print("loss:", loss)
