"""Real-world case 242.

Source: https://github.com/huggingface/transformers/issues/5427
Bug: a token classifier feeds the sequence output of a BERT-style encoder
(`encoder(ip)[0][:, 1:-1, :]`) to a Bidirectional LSTM head; the encoder also
computes its pooled [CLS] output through a pooler Dense layer, which this
model never uses, so model.fit warns "Gradients do not exist for variables
['tf_bert_model/bert/pooler/dense/kernel:0', '.../pooler/dense/bias:0']".
Setting: Keras 2 (tf_keras), self-attention encoder layer returning
(sequence_output, pooled_output), functional model, compile() + fit().
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Bidirectional, Dense, Dropout, Input, LSTM
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
ip = bert_model(ip1)[0][:, 1:-1, :]
out = Bidirectional(LSTM(units=8))(ip)
out = Dense(16, activation="relu")(out)
out = Dropout(0.2)(out)
out = Dense(units=9, activation="softmax")(out)
model = Model(ip1, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

x = np.random.randint(0, vocab, size=(32, max_length + 2))
y = np.random.randint(0, 9, size=(32,))
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
