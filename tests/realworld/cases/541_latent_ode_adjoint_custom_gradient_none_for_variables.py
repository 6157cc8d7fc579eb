"""Real-world case 541.

Source: https://github.com/titu1994/tfdiffeq/issues/2
Bug: a latent neural ODE (encoder -> ODE block -> decoder) whose ODE block
is integrated with a hand-written adjoint method wrapped in
@tf.custom_gradient, as discussed in the tfdiffeq issue about bringing the
adjoint method to TensorFlow. The dynamics network reads tf.Variables inside
the decorated solver, so TensorFlow demands that grad_fn accept
`variables=` and return one gradient per variable. The backward pass only
integrates the adjoint of the state and satisfies the check with
[None] * len(variables), assuming the tape still differentiates the weights
read in the forward pass. It does not: every weight of the dynamics network
gets a None gradient and Keras warns "Gradients do not exist for variables
['ode_b1:0', ...]"; the encoder and decoder still train.
Setting: plain TensorFlow tf.Module model with tf.Variables, eager
GradientTape loop, keras optimizer.
"""
import numpy as np
import tensorflow as tf
import keras

tf.random.set_seed(0)
rng = np.random.default_rng(0)


def glorot(shape, name):
    limit = np.sqrt(6.0 / (shape[0] + shape[1]))
    return tf.Variable(tf.random.uniform(shape, -limit, limit), name=name)


class ODEFunc(tf.Module):
    def __init__(self, dim, hidden):
        super().__init__(name="odefunc")
        self.w1 = glorot((dim, hidden), "ode_w1")
        self.b1 = tf.Variable(tf.zeros([hidden]), name="ode_b1")
        self.w2 = glorot((hidden, dim), "ode_w2")
        self.b2 = tf.Variable(tf.zeros([dim]), name="ode_b2")

    def __call__(self, z):
        return tf.tanh(z @ self.w1 + self.b1) @ self.w2 + self.b2


def rk4_step(func, z, dt):
    k1 = func(z)
    k2 = func(z + 0.5 * dt * k1)
    k3 = func(z + 0.5 * dt * k2)
    k4 = func(z + dt * k3)
    return z + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_adjoint(func, z0, n_steps, dt):
    @tf.custom_gradient
    def solve(z_start):
        z = z_start
        for _ in range(n_steps):
            z = rk4_step(func, z, dt)
        z_end = z

        def grad(dl_dz_end, variables=None):
            z, adj = z_end, dl_dz_end
            for _ in range(n_steps):
                with tf.GradientTape() as inner:
                    inner.watch(z)
                    f = func(z)
                vjp_z = inner.gradient(f, z, output_gradients=adj)
                z = z - dt * f
                adj = adj + dt * vjp_z
            return adj, [None] * len(variables)

        return z_end, grad

    return solve(z0)


class LatentODE(tf.Module):
    def __init__(self, obs_dim=4, latent_dim=2):
        super().__init__(name="latent_ode")
        self.enc_w = glorot((obs_dim, latent_dim), "enc_w")
        self.enc_b = tf.Variable(tf.zeros([latent_dim]), name="enc_b")
        self.func = ODEFunc(latent_dim, 16)
        self.dec_w = glorot((latent_dim, obs_dim), "dec_w")
        self.dec_b = tf.Variable(tf.zeros([obs_dim]), name="dec_b")

    def __call__(self, x):
        z0 = tf.tanh(x @ self.enc_w + self.enc_b)
        z1 = odeint_adjoint(self.func, z0, n_steps=10, dt=0.1)
        return z1 @ self.dec_w + self.dec_b


# synthetic trajectories: observation at t=0 and at t=1 of a damped rotation
theta = 0.8
rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]) * 0.9
lift = rng.normal(size=(2, 4))
z_start = rng.normal(size=(64, 2))
x0 = (z_start @ lift).astype("float32")
x1 = (z_start @ rot.T @ lift).astype("float32")

model = LatentODE()
optimizer = keras.optimizers.Adam(learning_rate=1e-2)

for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x0) - x1))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"step {step}: loss {float(loss):.4f}")
