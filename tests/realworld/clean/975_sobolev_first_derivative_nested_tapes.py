"""Clean control 975 (expected clean).

Look-alike of case 575: the derivative du/dx is taken with an inner tape while
the outer tape is still recording, and the slope loss is computed inside the
outer tape, so the second-order gradient reaches every weight.
Setting: second-order gradients, nested GradientTapes, eager custom loop.
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

for step in range(30):
    with tf.GradientTape() as tape:
        with tf.GradientTape() as inner_tape:
            inner_tape.watch(x)
            u = model(x)
        du_dx = inner_tape.gradient(u, x)
        loss = tf.reduce_mean(tf.square(du_dx - target_slope))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 10 == 0 or step == 29:
        print("step", step, "slope loss", float(loss))
