"""Real-world case 274.

Source: https://github.com/tensorflow/tensorflow/issues/15821
Bug: a GAN's discriminator step calls the discriminator on the real and the
generated batch first and only records the minimax loss function (applied to
those precomputed logits) on the GradientTape; the forward passes that read
the discriminator's weights ran outside the tape, so the tape sees no variable
and every discriminator gradient is None ("no variables to compute the
gradients on"; the answer: the computation involving variables was done
outside the function being differentiated).
Setting: GAN, Keras 3 models, custom train step in @tf.function.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
LATENT, BATCH = 8, 16
generator = keras.Sequential([keras.Input((LATENT,)), layers.Dense(16, activation="relu"), layers.Dense(2)], name="generator")
discriminator = keras.Sequential([keras.Input((2,)), layers.Dense(16, activation="relu", name="d_hidden"),
                                  layers.Dense(1, name="d_logit")], name="discriminator")
g_opt, d_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)


def minimax_loss_discriminator(real_logits, fake_logits):
    return tf.reduce_mean(tf.nn.softplus(-real_logits)) + tf.reduce_mean(tf.nn.softplus(fake_logits))


@tf.function
def train_step(real):
    z = tf.random.normal((BATCH, LATENT))
    real_logits = discriminator(real, training=True)
    fake_logits = discriminator(generator(z, training=True), training=True)
    with tf.GradientTape() as d_tape:
        d_loss = minimax_loss_discriminator(real_logits, fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    with tf.GradientTape() as g_tape:
        g_loss = tf.reduce_mean(tf.nn.softplus(-discriminator(generator(z, training=True), training=True)))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


for step in range(3):
    real = np.random.normal(loc=2.0, size=(BATCH, 2)).astype("float32")
    print(step, [float(v) for v in train_step(real)])
