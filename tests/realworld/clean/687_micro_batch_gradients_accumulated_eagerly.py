"""Clean control 687 (look-alike of case 287).

Source: https://github.com/tensorflow/tensorflow/issues/38453
Fix: the @tf.function computes the loss and the gradients of one micro-batch;
the loop over the tf.data micro-batches runs eagerly outside it, the
gradients are summed there and applied once per step, so no dataset op sits
between the weights and the loss.
Setting: classification, Keras 3 Sequential model, tf.data micro-batches,
per-micro-batch gradient step in @tf.function (graph mode).
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
def micro_batch_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True)) / N
    grads = tape.gradient(loss, model.trainable_variables)
    return loss, grads


for epoch in range(3):
    total, summed = 0.0, [tf.zeros_like(v) for v in model.trainable_variables]
    for xb, yb in micro_batches:
        loss, grads = micro_batch_step(xb, yb)
        total += float(loss)
        summed = [s + g for s, g in zip(summed, grads)]
    optimizer.apply_gradients(zip(summed, model.trainable_variables))
    print(epoch, total)
