"""Clean control 642 (expected clean).

The encoder + BiLSTM token classifier of case 242 also feeding the encoder's
pooled [CLS] output to the classifier (concatenated with the BiLSTM summary),
so the pooler is part of the loss and every weight trains.
Setting: Keras 2 (tf_keras), self-attention encoder layer returning
(sequence_output, pooled_output), functional model, compile() + fit().
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Bidirectional, Concatenate, Dense, Dropout, Input, LSTM
from tensorflow.keras.models import Model

tf.random.set_seed(0)
max_length, vocab, width = 10, 30, 16


class TinyBert(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embeddings = tf.keras.layers.Embedding(vocab, width)
        self.attention = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)
        self.norm = tf.keras.layers.LayerNormalization()
        self.pooler = tf.keras.layers.Dense(width, activation="tanh", name="pooler")

    def call(self, input_ids):
        h = self.embeddings(input_ids)
        sequence_output = self.norm(h + self.attention(h, h))
        pooled_output = self.pooler(sequence_output[:, 0])
        return sequence_output, pooled_output


ip1 = Input(shape=(max_length + 2,), dtype="int32")
bert_model = TinyBert(name="bert")
sequence_output, pooled_output = bert_model(ip1)
ip = sequence_output[:, 1:-1, :]
out = Bidirectional(LSTM(units=8))(ip)
out = Concatenate()([out, pooled_output])
out = Dense(16, activation="relu")(out)
out = Dropout(0.2)(out)
out = Dense(units=9, activation="softmax")(out)
model = Model(ip1, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

x = np.random.randint(0, vocab, size=(32, max_length + 2))
y = np.random.randint(0, 9, size=(32,))
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
