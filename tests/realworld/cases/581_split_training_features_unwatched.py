"""Real-world case 581.

Source: https://github.com/tensorflow/tensorflow/issues/36540
Bug: two cascading models (model1 -> features -> model2) are to be trained on
two different computers, so the single persistent tape was split in two:
tape1 records model1, tape2 records model2. The gradient that computer 2 must
send back, tape2.gradient(loss_value, features), is None: `features` arrives
in tape2 as a plain tensor that tape2 never watches. model1 is then updated
with tape1.gradient(features, ..., output_gradients=None), i.e. the gradient
of sum(features) instead of the loss, so "the results computed are different".
Setting: split (pipeline) training, two eager GradientTapes, gradient w.r.t. an intermediate tensor.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

model1 = keras.Sequential([keras.Input((16,)), layers.Dense(32, activation="relu"),
                           layers.Dense(8, activation="relu")], name="model1")
model2 = keras.Sequential([keras.Input((8,)), layers.Dense(16, activation="relu"),
                           layers.Dense(3)], name="model2")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer1 = keras.optimizers.Adam(1e-3)
optimizer2 = keras.optimizers.Adam(1e-3)

rng = np.random.default_rng(0)
x_train = rng.normal(size=(64, 16)).astype("float32")
y_train = rng.integers(0, 3, size=64)

for step in range(2):
    x_batch_train, y_batch_train = x_train[step * 32:(step + 1) * 32], y_train[step * 32:(step + 1) * 32]
    # computer 1
    with tf.GradientTape() as tape1:
        features = model1(x_batch_train)
    # computer 2
    with tf.GradientTape(persistent=True) as tape2:
        logits = model2(features)
        loss_value = loss_fn(y_batch_train, logits)
    grads2 = tape2.gradient(loss_value, model2.trainable_variables)
    grads_pass = tape2.gradient(loss_value, features)
    optimizer2.apply_gradients(zip(grads2, model2.trainable_variables))
    # back on computer 1
    grads1 = tape1.gradient(features, model1.trainable_variables, output_gradients=grads_pass)
    optimizer1.apply_gradients(zip(grads1, model1.trainable_variables))
    print("step", step, "loss", float(loss_value), "None gradients for:",
          ["features"] if grads_pass is None else [])
