"""Real-world case 829.

Source: https://github.com/keras-team/keras/issues/12270
Bug: "Why gradients don't seem to pass through Embedding?" The user asks for
the gradient of the per-step softmax with respect to the integer token ids
that feed the Embedding layer. Token ids are int32 indices: the tape refuses
to watch them (no gradient exists for an integer tensor), so the saliency
gradient is None, while the same gradient with respect to the embedded
vectors is well defined.
Setting: Keras 3 functional model (Embedding + LSTM + TimeDistributed
softmax) trained with fit, then an eager GradientTape saliency pass.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

vocab_size, emb_dim, seq_len = 20, 8, 6
rng = np.random.default_rng(0)
questions = rng.integers(1, vocab_size, size=(256, seq_len))
answers = (questions + 1) % vocab_size

input_questions = keras.Input(shape=(None,), dtype="int32", name="question")
embedding = layers.Embedding(vocab_size, emb_dim, name="embedding")
rnn = layers.LSTM(16, return_sequences=True, name="rnn")
head = layers.TimeDistributed(layers.Dense(vocab_size, activation="softmax"), name="softmax")
embed = embedding(input_questions)
softmax = head(rnn(embed))
model = keras.Model(inputs=input_questions, outputs=softmax)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(questions, answers, batch_size=32, epochs=2, verbose=2)

batch = tf.constant(questions[:4], dtype=tf.int32)
with tf.GradientTape() as tape:
    tape.watch(batch)
    probs = model(batch)
    score = tf.reduce_sum(tf.reduce_max(probs, axis=-1))
saliency = tape.gradient(score, batch)
print("saliency w.r.t. token ids:", saliency)
