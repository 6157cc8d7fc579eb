"""Real-world case 239.

Source: https://github.com/tensorflow/tensorflow/issues/26808
Bug: the user asks for the gradients of a loss w.r.t. a Keras model's
parameters with unconnected_gradients='zero', expecting zeros instead of None;
the loss computed inside the tape never calls the model, so every parameter is
unconnected (TF 2.0 alpha returned [None, None]; today the flag silently
returns zero tensors and the model would never train).
Setting: Keras 2 (tf_keras) Sequential model, eager GradientTape.
"""
import tensorflow as tf
import tensorflow.keras.layers as layers

tf.random.set_seed(0)
model = tf.keras.Sequential()
model.add(layers.Dense(10, input_shape=(2,)))
with tf.GradientTape() as tape:
    loss = tf.random.normal((10, 10))
grads = tape.gradient(loss, model.trainable_variables, unconnected_gradients="zero")
print([float(tf.reduce_sum(tf.abs(g))) for g in grads])
