"""Real-world case 1099.

Source: https://github.com/tensorflow/tensorflow/issues/51927
Bug: in a BERT-style triplet-extraction model the object head predicts
(batch, max_len, n_predicates, 2) start/end probabilities. Before the loss,
the user overwrites the padding positions of the prediction so they do not
count: the prediction is pulled out with .numpy(), the padded rows are set
to 0 with NumPy slicing in a Python loop, and the array goes back into the
loss. The loss value looks right, but it is a constant built from a NumPy
array, so tape.gradient returns None for every weight of the model and the
optimizer raises "No gradients provided for any variable".
Setting: Keras 3 functional model, eager custom training loop with GradientTape, NumPy inside the tape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB, MAX_LEN, N_PRED = 50, 16, 3


def loss4model(t, p, obj=False):
    loss_value = keras.losses.binary_crossentropy(t, p)
    if obj:
        loss_value = tf.reduce_mean(loss_value, axis=2)
    return tf.reduce_mean(loss_value)


keras.utils.set_random_seed(0)
tokens_in = keras.Input(shape=(MAX_LEN,), dtype="int32")
h = layers.Embedding(VOCAB, 16, name="bert_embeddings")(tokens_in)
h = layers.Dense(16, activation="gelu", name="bert_encoder")(h)
o = layers.Dense(N_PRED * 2, activation="sigmoid", name="object_head")(h)
o = layers.Reshape((MAX_LEN, N_PRED, 2))(o)
object_model = keras.Model(tokens_in, o)

rng = np.random.default_rng(0)
lengths = rng.integers(6, MAX_LEN, size=32)
tokens = np.zeros((32, MAX_LEN), dtype="int32")
object_labels = np.zeros((32, MAX_LEN, N_PRED, 2), dtype="float32")
for i, n in enumerate(lengths):
    tokens[i, :n] = rng.integers(1, VOCAB, size=n)
    object_labels[i, rng.integers(0, n), rng.integers(0, N_PRED)] = 1.0

optimizer = keras.optimizers.Adam(1e-3)
for step in range(3):
    with tf.GradientTape() as tape:
        object_pred = object_model(tokens, training=True)
        object_np = object_pred.numpy()
        for i, n in enumerate(lengths):
            object_np[i, n:] = 0.0              # overwrite the padding part
        loss = loss4model(object_labels, object_np, obj=True)
    grads = tape.gradient(loss, object_model.trainable_variables)
    optimizer.apply_gradients(zip(grads, object_model.trainable_variables))
    print("step", step, "loss", float(loss))
