"""Real-world case 461.

Source: https://github.com/tensorflow/tensorflow/issues/40974 (learned preprocessing inside dataset.map)
Bug: a learnable input scaling (`scale`, a tf.Variable) is applied inside the `tf.data`
pipeline's `map` function. The map runs in the input pipeline, outside any tape: the
batches reach the tape as constants, so `scale` gets None while the dense layer trains.
Setting: Keras 3 Dense + tf.Variable, tf.data pipeline, eager custom loop.
"""
import numpy as np
import tensorflow as tf

scale = tf.Variable(tf.ones([4]), name="scale")
dense = tf.keras.layers.Dense(1)
optimizer = tf.keras.optimizers.Adam(1e-2)
features = np.random.rand(64, 4).astype("float32")
targets = np.random.rand(64, 1).astype("float32")


def preprocess(x, y):
    return x * scale, y


dataset = tf.data.Dataset.from_tensor_slices((features, targets)).map(preprocess).batch(16)
variables = [scale]
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(dense(x) - y))
    variables = [scale] + dense.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
