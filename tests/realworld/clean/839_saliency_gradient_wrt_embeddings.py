"""Real-world control 839 (twin of case 829).

Source: https://github.com/keras-team/keras/issues/12270
Same Embedding + LSTM model as case 829; the saliency pass follows the usual
answer: token ids are integer indices with no gradient, so embed them first,
watch the embedded vectors and run the rest of the model on them, then
reduce the gradient over the embedding axis to get one score per token.
Setting: Keras 3 functional model trained with fit, then an eager
GradientTape saliency pass.
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
    embedded = embedding(batch)
    tape.watch(embedded)
    probs = head(rnn(embedded))
    score = tf.reduce_sum(tf.reduce_max(probs, axis=-1))
saliency = tf.norm(tape.gradient(score, embedded), axis=-1)
print("saliency per token:", saliency)
