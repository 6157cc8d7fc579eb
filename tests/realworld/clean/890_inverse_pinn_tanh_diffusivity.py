"""Clean control 890 (look-alike of case 490).

Source: https://github.com/lululxvi/deepxde/issues/80
The maintainer's advice applied: the same inverse PINN (learn u(x) and the diffusion coefficient k
in k * u_xx = f from a few measurements) with tanh hidden layers. tanh is smooth, u_xx taken with
nested tf.GradientTape is a real nonzero function of the weights, and k gets a nonzero gradient
from the PDE residual at every step, as do all network weights.
Setting: raw eager training loop, Keras 3 Sequential + a tf.Variable coefficient, three tapes.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
K_TRUE = 0.5  # k * u_xx = f on [0, 1] with u = sin(pi x)

hidden = [keras.layers.Dense(32, activation="tanh") for _ in range(3)]
model = keras.Sequential([keras.Input((1,)), *hidden, keras.layers.Dense(1)])
k = tf.Variable(1.0, name="diffusivity")

x_col = tf.random.uniform((128, 1))
f_col = -K_TRUE * np.pi**2 * tf.sin(np.pi * x_col)
x_obs = tf.random.uniform((16, 1))
u_obs = tf.sin(np.pi * x_obs)

optimizer = keras.optimizers.Adam(1e-2)
variables = model.trainable_variables + [k]
for step in range(3):
    with tf.GradientTape() as tape:
        with tf.GradientTape() as tape_xx:
            tape_xx.watch(x_col)
            with tf.GradientTape() as tape_x:
                tape_x.watch(x_col)
                u = model(x_col)
            u_x = tape_x.gradient(u, x_col)
        u_xx = tape_xx.gradient(u_x, x_col)
        pde_loss = tf.reduce_mean(tf.square(k * u_xx - f_col))
        data_loss = tf.reduce_mean(tf.square(model(x_obs) - u_obs))
        loss = pde_loss + data_loss
    grads = tape.gradient(loss, variables)
    assert all(g is not None and np.any(g.numpy()) for g in grads), "zero or missing gradient"
    optimizer.apply_gradients(zip(grads, variables))
    print(f"step {step}: loss={float(loss):.4f} k={float(k.numpy()):.4f}")

assert float(k.numpy()) != 1.0, "k did not move"
print("max |u_xx| =", float(tf.reduce_max(tf.abs(u_xx))))
