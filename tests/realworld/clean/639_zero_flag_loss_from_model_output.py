"""Clean control 639 (expected clean).

The request of case 239 with the loss computed from the model's output inside
the tape; unconnected_gradients='zero' is still passed, but every parameter is
connected, so it changes nothing.
Setting: Keras 2 (tf_keras) Sequential model, eager GradientTape.
"""
import tensorflow as tf
import tensorflow.keras.layers as layers

tf.random.set_seed(0)
model = tf.keras.Sequential()
model.add(layers.Dense(10, input_shape=(2,)))
x = tf.random.normal((10, 2))
target = tf.random.normal((10, 10))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - target))
grads = tape.gradient(loss, model.trainable_variables, unconnected_gradients="zero")
print([float(tf.reduce_sum(tf.abs(g))) for g in grads])
