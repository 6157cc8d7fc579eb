"""Real-world case 407.

Source: https://github.com/tensorflow/tensorflow/issues/21925
Bug: "When I use tf.scatter_update in eager mode, I get None gradients for
variables that are involved in the update (not for the updated variable)."
The writer network's keys are scattered into a memory tf.Variable with
tf.compat.v1.scatter_update and read back for the loss; a scatter into a
variable is a state update with no gradient, so the writer gets none and
apply_gradients raises "No gradients provided for any variable".
Setting: key-value memory, Keras 3 Sequential writer, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
writer = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                           keras.layers.Dense(4, name="key")], name="writer")
memory = tf.Variable(tf.zeros((10, 4)), trainable=False, name="memory")
optimizer = keras.optimizers.SGD(0.1)

x = np.random.randn(5, 6).astype("float32")
slots = tf.constant([0, 2, 4, 6, 8])
target = np.random.randn(5, 4).astype("float32")

for step in range(2):
    with tf.GradientTape() as tape:
        keys = writer(x)
        tf.compat.v1.scatter_update(memory, slots, keys)
        read = tf.gather(memory, slots)
        loss = tf.reduce_mean(tf.square(read - target))
    grads = tape.gradient(loss, writer.trainable_variables)
    optimizer.apply_gradients(zip(grads, writer.trainable_variables))
    print(step, float(loss))
