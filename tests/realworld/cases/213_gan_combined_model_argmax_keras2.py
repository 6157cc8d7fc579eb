"""Real-world case 213.

Source: https://github.com/tensorflow/tensorflow/issues/52260
Bug: a sequence GAN builds the combined model from a frozen discriminator and
a trainable generator and inserts K.argmax between them to turn the
generator's softmax into token ids for the discriminator's Embedding; argmax
has no gradient, so training the combined model fails with "No gradients
provided for any variable" (it works when the generator is frozen instead).
Setting: GAN (LSTM generator, Embedding discriminator), tf.keras (Keras 2)
functional combined model trained with train_on_batch.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
from tensorflow.keras.layers import LSTM, Dense, Embedding, Input, Reshape, TimeDistributed
from tensorflow.keras.models import Model, Sequential
from tensorflow.keras.optimizers import Adam

np.random.seed(0)
tf.random.set_seed(0)
timestep, n_vocab = 8, 20


def define_generator(timestep):
    return Sequential([Input(shape=(timestep,)), Reshape((timestep, 1)), LSTM(16, return_sequences=True),
                       TimeDistributed(Dense(n_vocab, activation="softmax"))])


def define_discriminator(timestep):
    model = Sequential([Input(shape=(timestep,)), Embedding(n_vocab, 8), LSTM(8), Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", optimizer=Adam(learning_rate=0.0002, beta_1=0.5))
    return model


def define_gan(g_model, d_model, timestep):
    discriminator.trainable = False
    generator.trainable = True

    a = Input(shape=(timestep,))
    b = g_model(a)
    c = K.argmax(b, axis=-1)
    output_d = d_model(c)
    model = Model(inputs=a, outputs=output_d)

    opt = Adam(learning_rate=0.0002, beta_1=0.5)
    model.compile(loss=["binary_crossentropy"], optimizer=opt, metrics=["accuracy"])
    return model


generator = define_generator(timestep)
discriminator = define_discriminator(timestep)
gan_model = define_gan(generator, discriminator, timestep)

real = np.random.randint(0, n_vocab, size=(16, timestep))
noise = np.random.rand(16, timestep).astype("float32")
fake = np.argmax(generator.predict(noise, verbose=0), axis=-1)
discriminator.train_on_batch(np.concatenate([real, fake]), np.concatenate([np.ones(16), np.zeros(16)]))
gan_model.train_on_batch(noise, np.ones(16))
