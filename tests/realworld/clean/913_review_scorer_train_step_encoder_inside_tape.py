"""Real-world control 913 (fixed twin of case 513).

Source: https://github.com/keras-team/keras-io/issues/406
Fix: the whole forward pass, encoder included, runs inside the GradientTape
in the overridden train_step, so the token embedding, the numeric projection
and the head all get gradients.
Setting: Keras 3 subclassed Model, overridden train_step, multi-input dict
batches from a tf.data pipeline, fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops


class ReviewScorer(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embed = layers.Embedding(500, 16, name="token_embed")
        self.pool = layers.GlobalAveragePooling1D(name="token_pool")
        self.meta_proj = layers.Dense(16, activation="relu", name="meta_proj")
        self.head = layers.Dense(1, name="head")

    def encode(self, inputs, training=False):
        text = self.pool(self.embed(inputs["tokens"]))
        meta = self.meta_proj(inputs["numeric"])
        return ops.concatenate([text, meta], axis=-1)

    def call(self, inputs, training=False):
        return self.head(self.encode(inputs, training=training))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            features = self.encode(x, training=True)
            logits = self.head(features)
            loss = self.compute_loss(x=x, y=y, y_pred=logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
tokens = rng.integers(1, 500, size=(128, 20)).astype("int32")
numeric = rng.normal(size=(128, 6)).astype("float32")
labels = rng.integers(0, 2, size=(128, 1)).astype("float32")
ds = tf.data.Dataset.from_tensor_slices(({"tokens": tokens, "numeric": numeric}, labels))
ds = ds.shuffle(128, seed=0).batch(32)

model = ReviewScorer(name="review_scorer")
model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
model.fit(ds, epochs=1, verbose=0)
