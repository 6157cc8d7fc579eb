"""Clean control 620 (expected clean).

Seq2seq-style model that keeps the encoder output soft: the Lambda layer only
casts float32 to float32 (differentiable), the encoder Embedding reads the
integer token inputs (its table gets gradients through the lookup), and the
decoder "embeds" the Dense softmax probabilities with a bias-free Dense layer
instead of an Embedding on cast ids, so every weight gets a gradient.
Setting: Keras 2 (tf_keras) functional seq2seq-style model with Lambda layers, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K
from tf_keras.layers import Dense, Dropout, Embedding, Input, Lambda, LSTM
from tf_keras.models import Model

tf.random.set_seed(0)
np.random.seed(0)

vocabulary, latent_dim, seq_len = 20, 8, 6
train_data = np.random.randint(0, vocabulary, size=(32, seq_len))
train_label = np.random.randint(0, vocabulary, size=(32, seq_len))

encoder_inputs = Input(shape=(train_data.shape[1],))
encoder_dense = Dense(vocabulary, activation="softmax")
encoder_outputs = Embedding(vocabulary, latent_dim)(encoder_inputs)
encoder_outputs = LSTM(latent_dim, return_sequences=True)(encoder_outputs)
encoder_outputs = Dropout(0.5)(encoder_outputs)
encoder_outputs = encoder_dense(encoder_outputs)
encoder_outputs = Lambda(K.cast, arguments={"dtype": "float32"})(encoder_outputs)

encoder_dense1 = Dense(vocabulary, activation="softmax")
decoder_embedding = Dense(latent_dim, use_bias=False)
decoder_lstm1 = LSTM(latent_dim, return_sequences=True)
decoder_dense2 = Dense(vocabulary, activation="softmax")

decoder_outputs = encoder_dense1(encoder_outputs)
decoder_outputs = decoder_embedding(decoder_outputs)
decoder_outputs = decoder_lstm1(decoder_outputs)
decoder_outputs = decoder_dense2(decoder_outputs)

model = Model(encoder_inputs, decoder_outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(train_data, train_label, batch_size=16, epochs=1, verbose=0)
print("trained without gradient warnings")
