"""Real-world case 758.

Source: https://github.com/tensorflow/tensorflow/issues/75351
Bug: gradient-based attribution (as in SHAP's GradientExplainer / DeepExplainer)
for a text model with an Embedding layer: the token ids are fed as a float
tensor, watched, and the prediction is differentiated with respect to them.
The Embedding layer casts its input to int32 before the lookup, so nothing
differentiable connects the ids to the prediction: the gradient is None
("gradients can't be computed for keras embeddings").
Setting: gradients with respect to inputs (attribution), Embedding(mask_zero=True) + LSTM, eager tape, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB, MAXLEN = 200, 12
rng = np.random.default_rng(0)
lengths = rng.integers(4, MAXLEN + 1, size=256)
x_train = np.zeros((256, MAXLEN), dtype="int32")
for i, n in enumerate(lengths):
    x_train[i, :n] = rng.integers(1, VOCAB, size=n)
y_train = (x_train[:, 0] % 2).astype("float32")

model = keras.Sequential([
    keras.Input((MAXLEN,)),
    layers.Embedding(VOCAB, 16, mask_zero=True, name="embedding"),
    layers.LSTM(16, name="lstm"),
    layers.Dense(1, activation="sigmoid", name="out"),
], name="sentiment")
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x_train, y_train, epochs=1, batch_size=64, verbose=0)

x = tf.convert_to_tensor(x_train[:4], dtype=tf.float32)
with tf.GradientTape() as tape:
    tape.watch(x)
    preds = model(x)
grads = tape.gradient(preds, x)
if grads is None:
    print("None gradients for:", ["x"])
else:
    print("attributions", (grads * x).numpy().sum(axis=-1))
