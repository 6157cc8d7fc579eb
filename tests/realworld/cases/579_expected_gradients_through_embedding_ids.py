"""Real-world case 579.

Source: https://github.com/shap/shap/issues/965
Bug: an Expected-Gradients explainer (the GradientExplainer recipe) for an
IMDB-style LSTM sentiment model interpolates between the token-id inputs and
background samples, watches the interpolated inputs and asks the tape for the
gradient of the output with respect to them. The model starts with an
Embedding layer, which casts its (float) input to integer ids before the
lookup, so there is no gradient with respect to the input: the tape returns
None for the interpolated inputs.
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


def expected_gradients(model, X, background, nsamples=16):
    t = rng.uniform(size=(nsamples, 1))
    rind = rng.integers(0, len(background), size=nsamples)
    samples_input = t * X[None, :] + (1.0 - t) * background[rind]
    samples_delta = X[None, :] - background[rind]
    samples_input = tf.convert_to_tensor(samples_input.astype("float32"))
    with tf.GradientTape() as tape:
        tape.watch(samples_input)
        out = model(samples_input)
    grads = tape.gradient(out, samples_input)
    if grads is None:
        print("None gradients for: ['samples_input']")
        return None
    return np.mean(grads.numpy() * samples_delta, axis=0)


x_test = rng.integers(1, max_features, size=(4, maxlen))
background = x_train[:20].astype("float32")
shap_values = [expected_gradients(model, x.astype("float32"), background) for x in x_test[:2]]
print("explained samples:", len(shap_values))
