"""Real-world case 482.

Source: https://github.com/alirezaafzalaghaei/rKAN/issues/1
Bug: the rKAN README builds a model with PadeRKAN(2, 6). PadeRKAN.build always
creates the Jacobi parameters alpha_p, beta_p and zeta_p, but call only uses them
inside `for deg in range(2, self.degree_p)`, which is empty for degree_p == 2: the
numerator is w_p[0] + w_p[1] * sigmoid(x). The three weights never reach the loss
and Keras warns "Gradients do not exist for variables ['pade_rkan/alpha_p:0',
'pade_rkan/beta_p:0', 'pade_rkan/zeta_p:0']" on every step.
Setting: tf_keras (Keras 2), custom rational-activation Layer (weights in build,
Python loop in call) inside a Sequential classifier trained with model.fit.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers
from tensorflow.keras.activations import elu, sigmoid

tf.keras.utils.set_random_seed(0)
np.random.seed(0)
keras = tf.keras


def shifted_jacobi_polynomial(x, n, alpha, beta, zeta, a, b):
    t = (2.0 * x - (a + b)) / (b - a) + zeta
    p_prev, p = tf.ones_like(t), 0.5 * (alpha - beta + (alpha + beta + 2.0) * t)
    for k in range(2, n + 1):
        s = 2.0 * k + alpha + beta
        c1 = 2.0 * k * (k + alpha + beta) * (s - 2.0)
        c2 = (s - 1.0) * (alpha ** 2 - beta ** 2)
        c3 = (s - 2.0) * (s - 1.0) * s
        c4 = 2.0 * (k + alpha - 1.0) * (k + beta - 1.0) * s
        p_prev, p = p, ((c2 + c3 * t) * p - c4 * p_prev) / c1
    return p


class PadeRKAN(layers.Layer):
    def __init__(self, degree_p, degree_q, **kwargs):
        super().__init__(**kwargs)
        self.degree_p = degree_p
        self.degree_q = degree_q

    def build(self, input_shape):
        self.alpha_p = self.add_weight(name="alpha_p", shape=(1,), initializer="ones")
        self.beta_p = self.add_weight(name="beta_p", shape=(1,), initializer="ones")
        self.zeta_p = self.add_weight(name="zeta_p", shape=(1,), initializer="zeros")
        self.w_p = self.add_weight(name="w_p", shape=(self.degree_p,), initializer="ones")
        self.alpha_q = self.add_weight(name="alpha_q", shape=(1,), initializer="ones")
        self.beta_q = self.add_weight(name="beta_q", shape=(1,), initializer="ones")
        self.zeta_q = self.add_weight(name="zeta_q", shape=(1,), initializer="zeros")
        self.w_q = self.add_weight(name="w_q", shape=(self.degree_q,), initializer="ones")
        super().build(input_shape)

    def call(self, inputs):
        normalized_alpha_p = elu(self.alpha_p, 1)
        normalized_beta_p = elu(self.beta_p, 1)
        normalized_zeta_p = sigmoid(self.zeta_p)
        normalized_alpha_q = elu(self.alpha_q, 1)
        normalized_beta_q = elu(self.beta_q, 1)
        normalized_zeta_q = sigmoid(self.zeta_q)
        normalized_inputs = sigmoid(inputs)

        p = self.w_p[0] + self.w_p[1] * normalized_inputs
        for deg in range(2, self.degree_p):
            p += self.w_p[deg] * shifted_jacobi_polynomial(
                normalized_inputs, deg, normalized_alpha_p, normalized_beta_p,
                normalized_zeta_p, 0.0, 1.0)
        q = self.w_q[0] + self.w_q[1] * normalized_inputs
        for deg in range(2, self.degree_q):
            q += self.w_q[deg] * shifted_jacobi_polynomial(
                normalized_inputs, deg, normalized_alpha_q, normalized_beta_q,
                normalized_zeta_q, 0.0, 1.0)
        return p / q


model = keras.Sequential([
    layers.InputLayer(input_shape=(6,)),
    layers.Dense(16),
    PadeRKAN(2, 6),  # Pade [2/6], as in the README
    layers.Dense(3, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
x = np.random.normal(size=(64, 6)).astype("float32")
y = np.random.randint(0, 3, size=(64,))
history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
print("losses", history.history["loss"])
