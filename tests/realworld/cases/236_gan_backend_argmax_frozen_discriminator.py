"""Real-world case 236.

Source: https://github.com/tensorflow/tensorflow/issues/52260
Bug: a sequence GAN chains the generator's per-step softmax into the (frozen)
discriminator through keras.backend.argmax, so the discriminator sees token ids;
argmax has no gradient, and with the discriminator non-trainable the combined
model's fit fails with "No gradients provided for any variable" (it "works" when
the discriminator is trainable, because only the discriminator then learns).
Setting: Keras 2 (tf_keras), functional GAN model built with tf.keras.backend
ops, model.compile() + model.fit().
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K
from tensorflow.keras.layers import Dense, Embedding, Input, LSTM, Reshape, Softmax
from tensorflow.keras.models import Model, Sequential
from tensorflow.keras.optimizers import Adam

tf.random.set_seed(0)
timestep, vocab = 6, 12
generator = Sequential([Input(shape=(timestep,)), Dense(timestep * vocab),
                        Reshape((timestep, vocab)), Softmax()], name="generator")
discriminator = Sequential([Input(shape=(timestep,)), Embedding(vocab, 8), LSTM(8),
                            Dense(1, activation="sigmoid")], name="discriminator")


def define_gan(g_model, d_model, timestep):
    d_model.trainable = False
    g_model.trainable = True
    a = Input(shape=(timestep,))
    b = g_model(a)
    c = K.argmax(b, axis=-1)
    output_d = d_model(c)
    model = Model(inputs=a, outputs=output_d)
    opt = Adam(learning_rate=0.0002, beta_1=0.5)
    model.compile(loss=["binary_crossentropy"], optimizer=opt, metrics=["accuracy"])
    return model


gan = define_gan(generator, discriminator, timestep)
noise = np.random.rand(32, timestep).astype("float32")
gan.fit(noise, np.ones((32, 1)), epochs=1, batch_size=16, verbose=0)
