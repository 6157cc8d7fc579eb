"""Real-world case 535.

Source: https://github.com/keras-team/keras/issues/5541
Bug: a Siamese (metric-learning) network scores a pair of images by the
Manhattan distance between the two embeddings of a shared encoder. As in the
report (which called scipy's cityblock inside the merge function), the
distance is computed with NumPy on the embeddings. Eagerly this runs and
returns the right numbers, but the values left TensorFlow: the contrastive loss
is built on a NumPy array that the tape never saw, so every encoder weight gets
a None gradient. The training loop checks the gradients and prints the ones
that are missing.
Setting: Keras 3 subclassed model with a shared Sequential encoder, eager
GradientTape loop, contrastive loss written with keras.ops.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

MARGIN = 1.0


def manhattan_distance(u, v):
    # scipy.spatial.distance.cityblock, one row per pair
    return np.sum(np.abs(np.asarray(u) - np.asarray(v)), axis=1, keepdims=True)


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
