"""Real-world case 593.

Source: https://github.com/ankurtaly/Integrated-Gradients/issues/7
Bug: integrated gradients for a text classifier interpolate between a
baseline and the input *token ids* (scaled_inputs = baseline + a * (ids -
baseline), a float tensor), watch that tensor and differentiate the class
score with respect to it. The Embedding layer casts its float input back to
integer indices before the lookup, so there is no gradient from the score to
the interpolated ids: tape.gradient returns None and the attributions cannot
be computed. The model itself trains fine.
Setting: Keras 3 Sequential text classifier (Embedding + Conv1D), compile() +
fit(), then an eager GradientTape attribution loop.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB, SEQ_LEN, EMB = 200, 20, 16

embedding = layers.Embedding(VOCAB, EMB, name="embedding")
encoder = keras.Sequential([
    keras.Input((SEQ_LEN, EMB)),
    layers.Conv1D(32, 3, activation="relu"),
    layers.GlobalMaxPooling1D(),
    layers.Dense(2, activation="softmax"),
], name="encoder")
model = keras.Sequential([keras.Input((SEQ_LEN,), dtype="int32"), embedding, encoder], name="classifier")
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

rng = np.random.default_rng(0)
ids = rng.integers(1, VOCAB, size=(256, SEQ_LEN))
labels = (np.isin(ids, np.arange(1, 20)).sum(axis=1) > 1).astype("int32")
model.fit(ids, labels, epochs=2, batch_size=32, verbose=0)


def integrated_gradients(inp, label, baseline=None, steps=20):
    if baseline is None:
        baseline = np.zeros_like(inp)
    alphas = np.linspace(0.0, 1.0, steps + 1)[:, None]
    scaled_inputs = tf.constant(baseline + alphas * (inp - baseline), dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(scaled_inputs)
        scores = model(scaled_inputs)[:, label]
    grads = tape.gradient(scores, scaled_inputs)
    if grads is None:
        print("None gradients for: ['scaled_inputs']")
        return None
    return (inp - baseline) * tf.reduce_mean(grads, axis=0)


attributions = integrated_gradients(ids[0], int(labels[0]))
