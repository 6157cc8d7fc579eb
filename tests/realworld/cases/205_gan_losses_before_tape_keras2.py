"""Real-world case 205.

Source: https://github.com/tensorflow/tensorflow/issues/31265
Bug: a DCGAN with subclassed Generator/Discriminator models runs the forward
pass and both losses first and only opens the GradientTape around the
gradient calls; nothing was recorded, so the generator's gradients are all
None and apply_gradients raises "No gradients provided for any variable"
(the answer: compute the losses with the tape recording).
Setting: GAN (DCGAN on 28x28 images), tf.keras (Keras 2) subclassed models, eager.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Generator(keras.Model):
    def __init__(self, n_f=16, n_k=4):
        super(Generator, self).__init__()
        self.model = keras.models.Sequential([
            keras.layers.Input((100,)),
            keras.layers.Dense(3 * 3 * n_f, activation=tf.nn.leaky_relu),
            keras.layers.Reshape((3, 3, n_f)),
            keras.layers.Conv2DTranspose(filters=n_f // 2, kernel_size=3, strides=2, padding="valid"),
            keras.layers.BatchNormalization(),
            keras.layers.LeakyReLU(),
            keras.layers.Conv2DTranspose(filters=n_f // 4, kernel_size=n_k, strides=2, padding="same"),
            keras.layers.BatchNormalization(),
            keras.layers.LeakyReLU(),
            keras.layers.Conv2DTranspose(filters=1, kernel_size=n_k, strides=2, padding="same"),
        ])

    def call(self, inputs, training=None, mask=None):
        return self.model(inputs, training=training, mask=mask)


class Discriminator(keras.Model):
    def __init__(self, n_f=16, n_k=4):
        super(Discriminator, self).__init__()
        self.model = keras.models.Sequential([
            keras.layers.Input((28, 28, 1)),
            keras.layers.Conv2D(filters=n_f, kernel_size=n_k, strides=2, padding="same"),
            keras.layers.LeakyReLU(),
            keras.layers.Conv2D(filters=n_f * 2, kernel_size=n_k, strides=2, padding="same"),
            keras.layers.LeakyReLU(),
            keras.layers.Flatten(),
            keras.layers.Dense(1),
        ])

    def call(self, inputs, training=None, mask=None):
        return self.model(inputs, training=training, mask=mask)


cross_entropy = keras.losses.BinaryCrossentropy(from_logits=True)
generator, discriminator = Generator(), Discriminator()
generator_optimizer = keras.optimizers.Adam(1e-4)
discriminator_optimizer = keras.optimizers.Adam(1e-4)
np.random.seed(0)
tf.random.set_seed(0)
images = np.random.rand(8, 28, 28, 1).astype("float32") * 2 - 1
noise = tf.random.normal([8, 100])

generated_images = generator(noise, training=True)
real_output = discriminator(images, training=True)
fake_output = discriminator(generated_images, training=True)
gen_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
disc_loss = (cross_entropy(tf.ones_like(real_output), real_output)
             + cross_entropy(tf.zeros_like(fake_output), fake_output))
with tf.GradientTape() as tape:
    gradients_of_generator = tape.gradient(gen_loss, generator.trainable_variables)
    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    gradients_of_discriminator = tape.gradient(disc_loss, discriminator.trainable_variables)
    discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
