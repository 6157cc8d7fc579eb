"""Clean control 993 (expected clean).

Source: https://github.com/ankurtaly/Integrated-Gradients/issues/7 (fixed form)
Integrated gradients for the text classifier are taken with respect to the
embedding vectors: the path is interpolated between the baseline's and the
input's embeddings, the interpolated embeddings are watched and fed to the
encoder, and the per-dimension attributions are summed per token.
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
    inp_emb = embedding(inp[None])[0]
    baseline_emb = embedding(baseline[None])[0]
    alphas = tf.linspace(0.0, 1.0, steps + 1)[:, None, None]
    scaled_embs = baseline_emb + alphas * (inp_emb - baseline_emb)
    with tf.GradientTape() as tape:
        tape.watch(scaled_embs)
        scores = encoder(scaled_embs)[:, label]
    grads = tape.gradient(scores, scaled_embs)
    return tf.reduce_sum((inp_emb - baseline_emb) * tf.reduce_mean(grads, axis=0), axis=-1)


attributions = integrated_gradients(ids[0], int(labels[0]))
