"""Clean control 685 (look-alike of case 285).

Source: https://github.com/tensorflow/tensorflow/issues/36306
Fix: the full-batch loss is accumulated by iterating over the dataset eagerly
inside the tape (a Python loop over its batches, as the report's working
variant does), so every term is an ordinary differentiable op on the tape and
each weight gets its gradient.
Setting: regression, Keras 3 Sequential model, tf.data input pipeline, eager
custom training loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
N = 256
x = np.random.uniform(-1.0, 1.0, size=(N, 4)).astype("float32")
y = (np.sin(x).sum(axis=1, keepdims=True) + 0.05 * np.random.randn(N, 1)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)

model = keras.Sequential([keras.Input((4,)), layers.Dense(32, activation="tanh", name="hidden"),
                          layers.Dense(1, name="out")], name="regressor")
optimizer = keras.optimizers.Adam(1e-2)


def add_batch_sse(total, batch):
    xb, yb = batch
    return total + tf.reduce_sum(tf.square(model(xb, training=True) - yb))


for step in range(3):
    with tf.GradientTape() as tape:
        total = tf.constant(0.0)
        for batch in dataset:
            total = add_batch_sse(total, batch)
        loss = total / N
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss))
