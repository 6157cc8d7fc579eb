# ruff: noqa: B905
"""Our own smoke program: a custom eager training loop for a small regression MLP."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(64, 8)).astype("float32")
y_train = (x_train @ rng.normal(size=(8, 1))).astype("float32")

model = keras.Sequential(
    [
        keras.Input((8,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.Dense(1),
    ]
)
optimizer = keras.optimizers.Adam(1e-3)

for step in range(3):
    with tf.GradientTape() as tape:
        pred = model(x_train, training=True)
        mse = tf.reduce_mean(tf.square(pred - y_train))
        l2 = 1e-4 * tf.add_n([tf.reduce_sum(tf.square(w)) for w in model.trainable_weights if "kernel" in w.path])
        loss = mse + l2
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("step", step, float(loss))
