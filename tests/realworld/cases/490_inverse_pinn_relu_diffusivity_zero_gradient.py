"""Real-world case 490.

Source: https://github.com/lululxvi/deepxde/issues/80
Bug: a physics-informed network with ReLU hidden layers ("Don't use relu, which is not second
order differentiable. Use smooth activations, e.g., tanh", the maintainer's answer to a PINN that
would not converge). The PDE residual needs u_xx, taken with nested tf.GradientTape; a ReLU net is
piecewise linear, so u_xx is exactly 0 everywhere (TensorFlow's gradient of ReluGrad w.r.t. its
features is zeros_like). Here the PINN solves an inverse problem: the diffusion coefficient k only
enters the loss through k * u_xx, so its gradient is an all-zero tensor (not None) at every step
and k never moves from its initial guess; the network itself still trains on the data term.
Setting: raw eager training loop, Keras 3 Sequential + a tf.Variable coefficient, three tapes.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
K_TRUE = 0.5  # k * u_xx = f on [0, 1] with u = sin(pi x)

hidden = [keras.layers.Dense(32, activation="relu") for _ in range(3)]
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
    optimizer.apply_gradients(zip(grads, variables))
    zero = [v.name for v, g in zip(variables, grads) if g is not None and not np.any(g.numpy())]
    print(f"step {step}: loss={float(loss):.4f} k={float(k.numpy()):.4f} all-zero grads: {zero}")

print("max |u_xx| =", float(tf.reduce_max(tf.abs(u_xx))), "-> k never learns")
