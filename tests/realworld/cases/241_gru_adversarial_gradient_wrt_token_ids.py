"""Real-world case 241.

Source: https://github.com/tensorflow/tensorflow/issues/5985
Bug: moving an adversarial-perturbation method (gradient of the loss w.r.t.
the input, then x - 0.001 * g) from images to a GRU sentiment classifier, the
user asks for the gradient w.r.t. the input sequence, which is a tensor of
integer token ids looked up in an embedding matrix with tf.nn.embedding_lookup;
integer ids have no gradient, so the result is None.
Setting: Keras 3 GRU + Dense layers around a tf.Variable embedding matrix,
eager GradientTape, gradient w.r.t. the token ids.
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
with tf.GradientTape() as tape:
    tape.watch(tokens)
    embedded = tf.nn.embedding_lookup(embeddings, tokens)
    last_state = gru(embedded)
    logits = logits_layer(hidden(last_state))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
g = tape.gradient(loss, tokens)
print("gradient w.r.t. tokens:", g)
