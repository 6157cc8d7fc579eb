"""Real-world case 344.

Source: https://stackoverflow.com/questions/56657993/how-to-create-a-keras-layer-with-a-custom-gradient-in-tf2-0
Bug: a hard-tanh activation with a hand-written gradient returns the local derivative
(1 inside [-1, 1], 0 outside) and drops the upstream gradient `dy`, so every weight below it
receives the same gradient whatever the loss says.
Setting: Keras 3 Sequential with the activation, eager custom loop, default flags.
"""
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def hard_tanh(x):
    def grad(upstream):
        return tf.cast(tf.abs(x) <= 1.0, x.dtype)

    return tf.clip_by_value(x, -1.0, 1.0), grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8), keras.layers.Activation(hard_tanh),
                          keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(1e-2)
x = np.random.randn(32, 6).astype("float32")
y = np.random.randn(32, 1).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
