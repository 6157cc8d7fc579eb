"""Clean control 674 (look-alike of case 274).

Source: https://github.com/tensorflow/tensorflow/issues/15821
Fix: the discriminator is called on the real and the generated batch inside
the discriminator's GradientTape, so the tape records the reads of its weights
and the minimax loss has a gradient for every discriminator variable; the
generator step is unchanged.
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
    with tf.GradientTape() as d_tape:
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(generator(z, training=True), training=True)
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
