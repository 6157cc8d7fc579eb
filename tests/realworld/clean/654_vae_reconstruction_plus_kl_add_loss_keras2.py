"""Clean control 654 (look-alike of case 254).

Source: https://github.com/keras-team/keras/issues/10819
The Keras VAE example as written: the added loss is the mean of the
reconstruction and KL terms, so encoder and decoder are both trained.
Setting: Keras 2 (tf_keras) functional encoder/decoder models, loss attached
with vae.add_loss, compile without a loss, model.fit.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K
from tf_keras.layers import Dense, Input, Lambda
from tf_keras.losses import mse
from tf_keras.models import Model

tf.random.set_seed(0)
original_dim, intermediate_dim, latent_dim = 16, 8, 2


def sampling(args):
    z_mean, z_log_var = args
    epsilon = K.random_normal(shape=(K.shape(z_mean)[0], K.int_shape(z_mean)[1]))
    return z_mean + K.exp(0.5 * z_log_var) * epsilon


inputs = Input(shape=(original_dim,), name="encoder_input")
x = Dense(intermediate_dim, activation="relu")(inputs)
z_mean = Dense(latent_dim, name="z_mean")(x)
z_log_var = Dense(latent_dim, name="z_log_var")(x)
z = Lambda(sampling, output_shape=(latent_dim,), name="z")([z_mean, z_log_var])
encoder = Model(inputs, [z_mean, z_log_var, z], name="encoder")

latent_inputs = Input(shape=(latent_dim,), name="z_sampling")
x = Dense(intermediate_dim, activation="relu")(latent_inputs)
outputs = Dense(original_dim, activation="sigmoid")(x)
decoder = Model(latent_inputs, outputs, name="decoder")

outputs = decoder(encoder(inputs)[2])
vae = Model(inputs, outputs, name="vae_mlp")

reconstruction_loss = mse(inputs, outputs) * original_dim
kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
kl_loss = K.sum(kl_loss, axis=-1) * -0.5
vae_loss = K.mean(reconstruction_loss + kl_loss)
vae.add_loss(vae_loss)
vae.compile(optimizer="adam")

x_train = np.random.rand(64, original_dim).astype("float32")
vae.fit(x_train, epochs=1, batch_size=16, verbose=0)
