"""Clean control 641 (expected clean).

The adversarial step of case 241 taken in embedding space: the embedded
sequence is watched and the loss is differentiated with respect to it, then
perturbed as x - 0.001 * g.
Setting: Keras 3 GRU + Dense layers around a tf.Variable embedding matrix,
eager GradientTape, gradient w.r.t. the embedded tokens.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
vocab_size, embedding_dim = 40, 8
embeddings = tf.Variable(tf.random.normal([vocab_size, embedding_dim], stddev=0.1), name="embeddings")
gru = keras.layers.GRU(16)
hidden = keras.layers.Dense(16, activation="relu")
logits_layer = keras.layers.Dense(2)

tokens = tf.constant(np.random.randint(0, vocab_size, size=(4, 10)), dtype=tf.int32)
labels = tf.constant([0, 1, 1, 0])
embedded = tf.nn.embedding_lookup(embeddings, tokens)
with tf.GradientTape() as tape:
    tape.watch(embedded)
    last_state = gru(embedded)
    logits = logits_layer(hidden(last_state))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
g = tape.gradient(loss, embedded)
assert g is not None
adversarial = embedded - 0.001 * g
print("perturbation norm:", float(tf.norm(adversarial - embedded)))
