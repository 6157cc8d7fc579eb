"""Control 861 (look-alike of case 461).

Source: https://github.com/tensorflow/tensorflow/issues/40974 (learned preprocessing inside dataset.map)
The pipeline's map only casts and normalises with constants; the learned scaling runs in the
tape.
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
    return tf.cast(x, tf.float32) / 2.0, y


dataset = tf.data.Dataset.from_tensor_slices((features, targets)).map(preprocess).batch(16)
variables = [scale]
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(dense(x * scale) - y))
    variables = [scale] + dense.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
