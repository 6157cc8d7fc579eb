"""Real-world case 285.

Source: https://github.com/tensorflow/tensorflow/issues/36306
Bug: to take full-batch steps, the loss over the whole training set is
accumulated inside the GradientTape with tf.data.Dataset.reduce. The whole
reduction runs as one dataset op, which has no gradient: the tape returns None
for every weight (the report: `ds.reduce(...)` gives a None gradient while
summing the same terms element by element gives the right one), and
apply_gradients raises "No gradients provided for any variable".
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
        loss = dataset.reduce(tf.constant(0.0), add_batch_sse) / N
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss))
