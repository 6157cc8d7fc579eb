"""Real-world case 203.

Source: https://github.com/keras-team/keras/issues/17444
Bug: a next-word text GAN turns the generator's softmax into a token with
np.argmax and pads it with pad_sequences before feeding the discriminator's
Embedding; the token leaves TensorFlow as a NumPy integer array, so the
generator's gradients are always [None, ...].
Setting: GAN (LSTM text generator/discriminator), tf.keras (Keras 2), eager tape.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras.layers import LSTM, Dense
from tensorflow.keras.preprocessing.sequence import pad_sequences

np.random.seed(0)
tf.random.set_seed(0)
total_words, max_sequence_length = 40, 8

generator = keras.Sequential(
    [
        layers.Embedding(total_words, 8, input_length=max_sequence_length - 1),
        LSTM(16, return_sequences=True),
        LSTM(8),
        layers.Dropout(0.1),
        Dense(total_words // 4),
        Dense(total_words, activation="softmax"),
    ],
    name="generator",
)
discriminator = keras.Sequential(
    [
        layers.Embedding(total_words, 8, input_length=max_sequence_length - 1),
        layers.Bidirectional(LSTM(8)),
        layers.Dropout(0.2),
        layers.Dense(8, activation="relu"),
        layers.Dense(1, activation="sigmoid"),
    ],
    name="discriminator",
)
cross_entropy = keras.losses.BinaryCrossentropy()
generator_optimizer = keras.optimizers.Adam(1e-3)

text = np.random.randint(1, total_words, size=(1, max_sequence_length - 1))
with tf.GradientTape() as gen_tape:
    predicted_next_word = generator(text, training=True)
    pred_to_word = pad_sequences([[np.argmax(predicted_next_word, axis=-1)[0]]], maxlen=max_sequence_length - 1)
    fake_output = discriminator(pred_to_word, training=True)
    gen_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
print("generator gradients:", gradients_of_generator)
generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
