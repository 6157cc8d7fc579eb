"""Real-world case 287.

Source: https://github.com/tensorflow/tensorflow/issues/38453
Bug: a @tf.function training step accumulates the loss over micro-batches by
looping over a (small) tf.data dataset inside the GradientTape, then takes one
gradient. Eagerly the same loop differentiates, but under tf.function autograph
turns `for ... in dataset` into a dataset reduction op, which has no gradient:
every weight gets None (the report: "gradient is not registered properly
(propagates None)" in autograph mode while eager mode is right), and
apply_gradients raises "No gradients provided for any variable".
Setting: classification, Keras 3 Sequential model, tf.data micro-batches,
custom training step in @tf.function (graph mode).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
N = 96
x = np.random.randn(N, 8).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
micro_batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

model = keras.Sequential([keras.Input((8,)), layers.Dense(16, activation="tanh", name="hidden"),
                          layers.Dense(2, name="logits")], name="classifier")
optimizer = keras.optimizers.SGD(0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")


@tf.function
def accumulated_step():
    with tf.GradientTape() as tape:
        total = tf.constant(0.0)
        for xb, yb in micro_batches:
            total += loss_fn(yb, model(xb, training=True))
        loss = total / N
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    print(epoch, float(accumulated_step()))
