# ruff: noqa: B905
"""Our own multi-phase smoke program: a baseline classifier trained by `fit`, then
contrastive (SimCLR-style) pre-training of an encoder with a custom `train_step`, then a
head fine-tuned by `fit` on the frozen encoder. Three trainings, each with its own bugs."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
x = rng.normal(size=(64, 8)).astype("float32")
y = rng.integers(0, 3, size=(64,))

# Phase 1: the supervised baseline the pre-training must beat.
baseline = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
baseline.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
baseline.fit(x, y, epochs=1, batch_size=32, verbose=0)

encoder = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
projector = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8)])


class Contrastive(keras.Model):
    """Two noisy views of each sample; each view's partner is its positive (NT-Xent)."""

    def __init__(self, encoder, projector, temperature=0.5):
        super().__init__()
        self.encoder = encoder
        self.projector = projector
        self.temperature = temperature

    def train_step(self, data):
        view1 = data + tf.random.normal(tf.shape(data), stddev=0.1)
        view2 = data + tf.random.normal(tf.shape(data), stddev=0.1)
        with tf.GradientTape() as tape:
            h1 = self.encoder(view1, training=True)
            h2 = self.encoder(view2, training=True)
            p1 = self.projector(h1, training=True)
            p2 = self.projector(h2, training=True)
            z1 = tf.math.l2_normalize(p1, axis=1)
            z2 = tf.math.l2_normalize(p2, axis=1)
            logits = tf.matmul(z1, z2, transpose_b=True) / self.temperature
            labels = tf.range(tf.shape(logits)[0])
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


# Phase 2: self-supervised pre-training (no labels).
contrastive = Contrastive(encoder, projector)
contrastive.compile(optimizer=keras.optimizers.Adam(1e-3))
contrastive.fit(x, epochs=1, batch_size=32, verbose=0)


class LinearHead(keras.Model):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(3)

    def call(self, inputs):
        x = self.encoder(inputs, training=False)
        x = self.hidden(x)
        return self.out(x)


# Phase 3: fine-tune a head on the frozen encoder.
encoder.trainable = False
head = LinearHead(encoder)
head.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
head.fit(x, y, epochs=1, batch_size=32, verbose=0)
