"""Real-world control 1070 (twin of case 1050).

Source: https://github.com/tensorflow/tensorflow/issues/33095
Fixed: the pretrained encoder is frozen (`encoder.trainable = False`) instead
of being cut with stop_gradient, so `self.trainable_variables` holds only the
head's variables and every one of them gets a gradient.
Setting: Keras 3 subclassed model (Embedding with mask_zero + GRU encoder, Dense head), custom train_step, fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB, MAXLEN = 200, 12


class EncoderClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([
            layers.Embedding(VOCAB, 16, mask_zero=True),
            layers.GRU(16),
        ], name="encoder")
        self.encoder.trainable = False
        self.head = keras.Sequential([
            layers.Dense(16, activation="relu"),
            layers.Dense(1),
        ], name="head")
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, tokens):
        features = self.encoder(tokens)
        return self.head(features)

    def train_step(self, data):
        tokens, labels = data
        with tf.GradientTape() as tape:
            logits = self(tokens, training=True)
            loss = self.loss_fn(labels, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


rng = np.random.default_rng(0)
lengths = rng.integers(3, MAXLEN + 1, size=128)
tokens = np.zeros((128, MAXLEN), dtype="int32")
for row, n in enumerate(lengths):
    tokens[row, :n] = rng.integers(1, VOCAB, size=n)
labels = (tokens[:, 0] % 2).astype("float32").reshape(-1, 1)

model = EncoderClassifier()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(tokens, labels, batch_size=32, epochs=3, verbose=2)
