"""Clean control 1074 (expected clean).

Twin of case 1054: the derivatives are taken with respect to the model inputs
the network actually consumed, and column 0 is sliced out of the gradient
afterwards, so the residual r = y * dy/dx0 - x1 * d2y/dx0^2 is built.
Setting: physics-informed residual, nested GradientTapes, eager custom loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.uniform(-1.0, 1.0, size=(128, 2)).astype("float32")
y_train = np.tanh(x_train[:, :1]) * (1.0 + 0.1 * x_train[:, 1:])

model = keras.Sequential([
    keras.Input(shape=(2,)),
    layers.Dense(32, activation="tanh"),
    layers.Dense(32, activation="tanh"),
    layers.Dense(1),
], name="mlp")
optimizer = keras.optimizers.Adam(1e-3)
mse = keras.losses.MeanSquaredError()

model_inputs = tf.convert_to_tensor(x_train)
for epoch in range(30):
    with tf.GradientTape() as outer_tape:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(model_inputs)
            model_outputs = model(model_inputs, training=True)
            dy_dx = tape.gradient(model_outputs, model_inputs)[:, 0:1]
        d2y_dx2 = tape.gradient(dy_dx, model_inputs)[:, 0:1]
        r = model_outputs * dy_dx - model_inputs[:, 1:] * d2y_dx2
        loss = mse(y_train, model_outputs) + tf.reduce_mean(tf.square(r))
    grads = outer_tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if epoch % 10 == 0 or epoch == 29:
        print("epoch", epoch, "loss", float(loss))
