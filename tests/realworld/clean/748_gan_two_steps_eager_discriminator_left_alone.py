"""Clean control 748 (expected clean).

The GAN of case 346 trained by an eager loop with a discriminator step and a generator
step of their own; the generator step leaves the discriminator alone (its loss goes through
the discriminator, which only its own step updates). A third model, frozen with
trainable=False, feeds the generator's loss too.
Setting: Keras 3 Sequential models, two eager functions, two optimizers.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(6)])
discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
feature_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3)])
feature_net.trainable = False
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_optimizer, g_optimizer = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)


def d_step(real, z):
    with tf.GradientTape() as tape:
        d_loss = bce(tf.ones((32, 1)), discriminator(real)) + bce(tf.zeros((32, 1)), discriminator(generator(z)))
    grads = tape.gradient(d_loss, discriminator.trainable_variables)
    d_optimizer.apply_gradients(zip(grads, discriminator.trainable_variables))


def g_step(real, z):
    with tf.GradientTape() as tape:
        fake = generator(z)
        g_loss = bce(tf.ones((32, 1)), discriminator(fake))
        g_loss += tf.reduce_mean(tf.square(feature_net(fake) - feature_net(real)))
    grads = tape.gradient(g_loss, generator.trainable_variables)
    g_optimizer.apply_gradients(zip(grads, generator.trainable_variables))


for step in range(3):
    real = np.random.randn(32, 6).astype("float32")
    z = tf.random.normal((32, 4))
    d_step(real, z)
    g_step(real, z)
