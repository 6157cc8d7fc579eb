"""Real-world case 1054.

Source: https://github.com/tensorflow/tensorflow/issues/39344
Bug: an MLP y(x) with two input features is trained on an MSE term plus the
residual r = y * dy/dx0 - x1 * d2y/dx0^2. The derivative is requested with
respect to `tf.gather(model_inputs, [0], axis=1)`: that is a *new* tensor
sliced out of the inputs, which the model never consumed, so dy/dx0 (and the
second derivative) come back as None and the residual term cannot be built.
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
for epoch in range(3):
    with tf.GradientTape() as outer_tape:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(model_inputs)
            model_outputs = model(model_inputs, training=True)
            x0 = tf.gather(model_inputs, [0], axis=1)
            dy_dx = tape.gradient(model_outputs, x0)
        d2y_dx2 = None if dy_dx is None else tape.gradient(dy_dx, x0)
        if dy_dx is None or d2y_dx2 is None:
            print("None gradients for: ['x0']")
            break
        r = model_outputs * dy_dx - model_inputs[:, 1:] * d2y_dx2
        loss = mse(y_train, model_outputs) + tf.reduce_mean(tf.square(r))
    grads = outer_tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("epoch", epoch, "loss", float(loss))
