"""Real-world case 575.

Source: https://github.com/tensorflow/tensorflow/issues/41510
Bug: a derivative-matching (Sobolev-style) fit: the loss asks the derivative of
the network output with respect to its input to match a known slope. Following the advice in the
thread to dedent the first tape.gradient call out of the `with` block (to get
rid of "Tape is still recording"), the derivative du/dx is now computed after
the persistent tape stopped recording; the tape never sees how du/dx depends on
the weights, so the second gradient (loss w.r.t. the weights) is None for every
weight and apply_gradients raises "No gradients provided for any variable".
Setting: second-order gradients, persistent GradientTape, eager custom loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

x = tf.constant(np.linspace(-2.0, 2.0, 64).reshape(-1, 1).astype("float32"))
target_slope = tf.cos(x)

model = keras.Sequential([
    keras.Input((1,)),
    layers.Dense(32, activation="tanh"),
    layers.Dense(32, activation="tanh"),
    layers.Dense(1, use_bias=False),
])
optimizer = keras.optimizers.Adam(1e-2)

for step in range(3):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        u = model(x)
    du_dx = tape.gradient(u, x)
    loss = tf.reduce_mean(tf.square(du_dx - target_slope))
    grads = tape.gradient(loss, model.trainable_variables)
    del tape
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("step", step, "slope loss", float(loss))
