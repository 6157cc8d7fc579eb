"""Clean control 979 (expected clean).

Look-alike of case 579: the Expected-Gradients explainer interpolates in the
embedding space (embedded sample vs embedded background), watches the
interpolated embeddings and runs the rest of the model (LSTM + Dense) on them,
so the attribution gradients exist.
Setting: gradients w.r.t. inputs (attribution), eager GradientTape, Keras 3 Sequential.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

max_features, maxlen = 500, 20
model = keras.Sequential([
    keras.Input((maxlen,)),
    layers.Embedding(max_features, 16),
    layers.LSTM(16),
    layers.Dense(1, activation="sigmoid"),
])
rng = np.random.default_rng(0)
x_train = rng.integers(1, max_features, size=(64, maxlen))


embedding, head_layers = model.layers[0], model.layers[1:]


def expected_gradients(model, X, background, nsamples=16):
    t = rng.uniform(size=(nsamples, 1, 1)).astype("float32")
    rind = rng.integers(0, len(background), size=nsamples)
    emb_x = embedding(X[None, :].astype("int32"))
    emb_bg = embedding(background[rind].astype("int32"))
    samples_input = t * emb_x + (1.0 - t) * emb_bg
    samples_delta = emb_x - emb_bg
    with tf.GradientTape() as tape:
        tape.watch(samples_input)
        out = samples_input
        for layer in head_layers:
            out = layer(out)
    grads = tape.gradient(out, samples_input)
    return np.mean((grads * samples_delta).numpy().sum(axis=-1), axis=0)


x_test = rng.integers(1, max_features, size=(4, maxlen))
background = x_train[:20].astype("float32")
shap_values = [expected_gradients(model, x.astype("float32"), background) for x in x_test[:2]]
print("attributions:", [float(np.abs(v).sum()) for v in shap_values])
