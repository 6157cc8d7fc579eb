"""Clean control 816 (look-alike of case 416).

Source: https://github.com/tensorflow/tensorflow/issues/41510
The thread's working form: the first gradient and the penalty are computed
inside the persistent tape's block, so the second gradient reaches the weights.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1, use_bias=False)])
x = tf.convert_to_tensor(np.random.randn(16, 5).astype("float32"))

with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    out = tf.reduce_sum(model(x))
    input_grad = tape.gradient(out, x)
    penalty = tf.reduce_mean(tf.reduce_sum(tf.square(input_grad), axis=1))
grads = tape.gradient(penalty, model.trainable_variables)
print("penalty", float(penalty), "grads:", [g.shape for g in grads])
