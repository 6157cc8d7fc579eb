"""Clean control 807 (look-alike of case 407).

Source: https://github.com/tensorflow/tensorflow/issues/21925
The memory is built functionally with tf.tensor_scatter_nd_update on a tensor
(differentiable w.r.t. the updates) instead of a scatter into a variable.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
writer = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                           keras.layers.Dense(4, name="key")], name="writer")
optimizer = keras.optimizers.SGD(0.1)

x = np.random.randn(5, 6).astype("float32")
slots = tf.constant([0, 2, 4, 6, 8])
target = np.random.randn(5, 4).astype("float32")

for step in range(2):
    with tf.GradientTape() as tape:
        keys = writer(x)
        memory = tf.tensor_scatter_nd_update(tf.zeros((10, 4)), slots[:, None], keys)
        read = tf.gather(memory, slots)
        loss = tf.reduce_mean(tf.square(read - target))
    grads = tape.gradient(loss, writer.trainable_variables)
    optimizer.apply_gradients(zip(grads, writer.trainable_variables))
    print(step, float(loss))
