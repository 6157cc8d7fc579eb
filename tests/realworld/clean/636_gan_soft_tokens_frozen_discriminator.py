"""Clean control 636 (expected clean).

The sequence GAN of case 236 with the discriminator reading the generator's
per-step softmax probabilities directly (a Dense projection plays the role of
the embedding lookup on soft one-hot tokens), so the frozen discriminator
passes gradients back to the generator.
Setting: Keras 2 (tf_keras), functional GAN model, model.compile() + model.fit().
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input, LSTM, Reshape, Softmax
from tensorflow.keras.models import Model, Sequential
from tensorflow.keras.optimizers import Adam

tf.random.set_seed(0)
timestep, vocab = 6, 12
generator = Sequential([Input(shape=(timestep,)), Dense(timestep * vocab),
                        Reshape((timestep, vocab)), Softmax()], name="generator")
discriminator = Sequential([Input(shape=(timestep, vocab)), Dense(8, use_bias=False), LSTM(8),
                            Dense(1, activation="sigmoid")], name="discriminator")


def define_gan(g_model, d_model, timestep):
    d_model.trainable = False
    g_model.trainable = True
    a = Input(shape=(timestep,))
    b = g_model(a)
    output_d = d_model(b)
    model = Model(inputs=a, outputs=output_d)
    opt = Adam(learning_rate=0.0002, beta_1=0.5)
    model.compile(loss=["binary_crossentropy"], optimizer=opt, metrics=["accuracy"])
    return model


gan = define_gan(generator, discriminator, timestep)
noise = np.random.rand(32, timestep).astype("float32")
gan.fit(noise, np.ones((32, 1)), epochs=1, batch_size=16, verbose=0)
