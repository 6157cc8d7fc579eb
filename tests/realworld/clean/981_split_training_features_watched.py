"""Clean control 981 (expected clean).

Look-alike of case 581: on computer 2 the incoming features are watched by
tape2 before model2 uses them, so tape2 returns the gradient of the loss with
respect to the features and model1 is updated with the true chain rule.
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

for step in range(40):
    x_batch_train, y_batch_train = x_train[(step % 2) * 32:(step % 2 + 1) * 32], y_train[(step % 2) * 32:(step % 2 + 1) * 32]
    # computer 1
    with tf.GradientTape() as tape1:
        features = model1(x_batch_train)
    # computer 2
    with tf.GradientTape(persistent=True) as tape2:
        tape2.watch(features)
        logits = model2(features)
        loss_value = loss_fn(y_batch_train, logits)
    grads2 = tape2.gradient(loss_value, model2.trainable_variables)
    grads_pass = tape2.gradient(loss_value, features)
    optimizer2.apply_gradients(zip(grads2, model2.trainable_variables))
    # back on computer 1
    grads1 = tape1.gradient(features, model1.trainable_variables, output_gradients=grads_pass)
    optimizer1.apply_gradients(zip(grads1, model1.trainable_variables))
    if step % 10 == 0 or step == 39:
        print("step", step, "loss", float(loss_value))
