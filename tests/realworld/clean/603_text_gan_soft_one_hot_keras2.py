"""Clean control 603 (expected clean).

The next-word text GAN of case 203 with a differentiable hand-off: the
discriminator reads one-hot rows (a Dense layer plays the embedding), the real
prefix is one-hot encoded and the generated word is passed as the generator's
softmax distribution, so every generator weight gets a gradient.
Setting: GAN (LSTM text generator/discriminator), tf.keras (Keras 2), eager tape.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras.layers import LSTM, Dense

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
        layers.Dense(8, use_bias=False, input_shape=(max_sequence_length - 1, total_words)),
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
    prefix = tf.one_hot(text[:, 1:], total_words)
    fake_sequence = tf.concat([prefix, predicted_next_word[:, None, :]], axis=1)
    fake_output = discriminator(fake_sequence, training=True)
    gen_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
print("None gradients:", sum(g is None for g in gradients_of_generator))
generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
