"""Clean control 778 (expected clean).

Twin of case 758: the attribution is taken with respect to the embedding
vectors (the usual workaround): the Embedding layer looks the integer ids up
inside the tape, its output is watched and fed on through the LSTM with the
padding mask, and gradient x input is summed over the embedding axis.
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

x = tf.convert_to_tensor(x_train[:4])
embedding, lstm, out = model.get_layer("embedding"), model.get_layer("lstm"), model.get_layer("out")
with tf.GradientTape() as tape:
    emb = embedding(x)
    tape.watch(emb)
    preds = out(lstm(emb, mask=embedding.compute_mask(x)))
grads = tape.gradient(preds, emb)
print("attributions", tf.reduce_sum(grads * emb, axis=-1).numpy())
