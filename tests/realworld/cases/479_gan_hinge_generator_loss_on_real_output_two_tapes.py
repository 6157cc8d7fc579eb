"""Real-world case 479.

Source: https://github.com/manicman1999/StyleGAN2-Tensorflow-2.0/issues/9
Bug: in the StyleGAN2 TF2 train step (hinge loss, one gen_tape and one disc_tape), the
reporter asks whether the generator loss gen_loss = K.mean(fake_output) "should be
K.mean(real_output) to confuse discriminator". The answer: "The generator can't influence
the results of the real outputs ..., the gradients wouldn't flow through the generator."
With that change the generator's loss reads only the discriminator's score of real images:
every generator gradient is None and Keras raises "No gradients provided for any variable".
Setting: Keras 3 functional generator and discriminator, @tf.function train_step with two
tapes opened in one with-statement, hinge divergence for the discriminator.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
LATENT, BATCH = 16, 16

generator = keras.Sequential([
    keras.Input((LATENT,)),
    keras.layers.Dense(8 * 8 * 4, activation="relu"),
    keras.layers.Reshape((8, 8, 4)),
    keras.layers.Conv2D(1, 3, padding="same", activation="tanh"),
], name="generator")
discriminator = keras.Sequential([
    keras.Input((8, 8, 1)),
    keras.layers.Conv2D(8, 3, strides=2, padding="same"),
    keras.layers.LeakyReLU(0.2),
    keras.layers.Flatten(),
    keras.layers.Dense(1),
], name="discriminator")
gen_optimizer = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.99)
disc_optimizer = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.99)


@tf.function
def train_step(images, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated_images = generator(noise, training=True)
        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated_images, training=True)
        gen_loss = tf.reduce_mean(real_output)
        divergence = tf.reduce_mean(tf.nn.relu(1 + real_output) + tf.nn.relu(1 - fake_output))
        disc_loss = divergence
    gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    disc_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
    return disc_loss, gen_loss


images = np.random.uniform(-1, 1, (4 * BATCH, 8, 8, 1)).astype("float32")
for step in range(4):
    batch = images[step * BATCH:(step + 1) * BATCH]
    train_step(batch, tf.random.normal((BATCH, LATENT)))
