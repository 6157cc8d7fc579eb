"""Real-world control 935 (fixed twin of case 535).

Source: https://github.com/keras-team/keras/issues/5541
Fix: the Manhattan distance between the two embeddings is written with
keras.ops (sum of absolute differences), as the answer in the report advises,
so it stays on the tape and every weight of the shared encoder gets a gradient
from the contrastive loss.
Setting: Keras 3 subclassed model with a shared Sequential encoder, eager
GradientTape loop, contrastive loss written with keras.ops.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

MARGIN = 1.0


def manhattan_distance(u, v):
    # same numbers as scipy.spatial.distance.cityblock, one row per pair
    return ops.sum(ops.abs(u - v), axis=1, keepdims=True)


class SiameseNet(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = keras.Sequential([
            layers.Conv2D(8, 3, activation="relu", name="twin_conv"),
            layers.GlobalAveragePooling2D(),
            layers.Dense(16, activation="tanh", name="twin_embed"),
        ], name="twin_encoder")

    def call(self, pair, training=False):
        left, right = pair
        return manhattan_distance(self.encoder(left, training=training),
                                  self.encoder(right, training=training))


def contrastive_loss(same, distance):
    distance = ops.convert_to_tensor(distance, dtype="float32")
    positive = same * ops.square(distance)
    negative = (1.0 - same) * ops.square(ops.maximum(MARGIN - distance, 0.0))
    return ops.mean(positive + negative)


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
left = rng.normal(size=(32, 12, 12, 1)).astype("float32")
right = rng.normal(size=(32, 12, 12, 1)).astype("float32")
same = rng.integers(0, 2, size=(32, 1)).astype("float32")

model = SiameseNet(name="siamese")
optimizer = keras.optimizers.Adam(1e-3)

for step in range(3):
    with tf.GradientTape() as tape:
        distance = model((left, right), training=True)
        loss = contrastive_loss(same, distance)
    grads = tape.gradient(loss, model.trainable_variables)
    missing = [v.path for v, g in zip(model.trainable_variables, grads) if g is None]
    if missing:
        print("step", step, "loss", float(loss), "no gradient for", missing)
        continue
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("step", step, "loss", float(loss))
