"""Clean control 613 (expected clean).

The combined sequence GAN of case 213 without the argmax: the frozen
discriminator reads one-hot rows through a Dense embedding, so the combined
model feeds it the generator's softmax output directly and real sequences are
one-hot encoded; np.argmax is used only to decode generated samples. Training
the combined model updates every generator weight.
Setting: GAN (LSTM generator, Dense-embedding discriminator), tf.keras (Keras 2)
functional combined model trained with train_on_batch.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import LSTM, Dense, Input, Reshape, TimeDistributed
from tensorflow.keras.models import Model, Sequential
from tensorflow.keras.optimizers import Adam

np.random.seed(0)
tf.random.set_seed(0)
timestep, n_vocab = 8, 20


def define_generator(timestep):
    return Sequential([Input(shape=(timestep,)), Reshape((timestep, 1)), LSTM(16, return_sequences=True),
                       TimeDistributed(Dense(n_vocab, activation="softmax"))])


def define_discriminator(timestep):
    model = Sequential([Input(shape=(timestep, n_vocab)), Dense(8, use_bias=False), LSTM(8),
                        Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", optimizer=Adam(learning_rate=0.0002, beta_1=0.5))
    return model


def define_gan(g_model, d_model, timestep):
    discriminator.trainable = False
    generator.trainable = True

    a = Input(shape=(timestep,))
    b = g_model(a)
    output_d = d_model(b)
    model = Model(inputs=a, outputs=output_d)

    opt = Adam(learning_rate=0.0002, beta_1=0.5)
    model.compile(loss=["binary_crossentropy"], optimizer=opt, metrics=["accuracy"])
    return model


generator = define_generator(timestep)
discriminator = define_discriminator(timestep)
gan_model = define_gan(generator, discriminator, timestep)

real = np.eye(n_vocab, dtype="float32")[np.random.randint(0, n_vocab, size=(16, timestep))]
noise = np.random.rand(16, timestep).astype("float32")
fake = generator.predict(noise, verbose=0)
print("sample:", np.argmax(fake[0], axis=-1))
discriminator.train_on_batch(np.concatenate([real, fake]), np.concatenate([np.ones(16), np.zeros(16)]))
print("gan loss:", gan_model.train_on_batch(noise, np.ones(16)))
