# ruff: noqa: B007, B905
"""Our own smoke program: a subclassed embedding model trained by a `tf.function` step on a
contrastive loss (identical pairs in the batch make the distance exactly 0)."""

import keras
import numpy as np
import tensorflow as tf


class Embedder(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.proj = keras.layers.Dense(8)

    def call(self, x):
        x = self.hidden(x)
        x = self.proj(x)
        return x


model = Embedder()
optimizer = keras.optimizers.SGD(0.01)
rng = np.random.default_rng(1)
a = rng.normal(size=(32, 4)).astype("float32")
b = np.concatenate([a[:16], rng.normal(size=(16, 4)).astype("float32")])  # the first half: same point
same = np.concatenate([np.ones(16), np.zeros(16)]).astype("float32")


@tf.function
def train_step(a, b, same):
    with tf.GradientTape() as tape:
        ea = model(a)
        eb = model(b)
        dist = tf.sqrt(tf.reduce_sum(tf.square(ea - eb), axis=1) + 1e-12)
        loss = tf.reduce_mean(same * dist + (1.0 - same) * tf.square(tf.maximum(1.0 - dist, 0.0)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    print(float(train_step(a, b, same)))
