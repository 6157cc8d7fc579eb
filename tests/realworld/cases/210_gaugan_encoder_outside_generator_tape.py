"""Real-world case 210.

Source: https://github.com/soumik12345/tf2_gans/issues/14
Bug: in the GauGAN model (the keras.io example and tf2_gans) the image
encoder never trains: train_step runs the encoder and the Gaussian sampler
before calling train_generator, whose tape then only sees the latent vector.
Adding the encoder's variables to tape.gradient, as suggested in the fix's
review, gives None for all of them ("Gradients do not exist for variables").
Setting: GAN (GauGAN-style encoder + generator + discriminator), Keras 3,
model.fit with a custom train_step.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

image_size, num_classes, latent_dim, batch_size = 16, 3, 8, 4
np.random.seed(0)
tf.random.set_seed(0)


class GaussianSampler(layers.Layer):
    def call(self, inputs):
        means, variance = inputs
        epsilon = tf.random.normal(shape=tf.shape(means))
        return means + tf.exp(0.5 * variance) * epsilon


def build_encoder():
    image = keras.Input((image_size, image_size, 3))
    x = layers.LeakyReLU(0.2)(layers.Conv2D(8, 3, strides=2, padding="same")(image))
    x = layers.Flatten()(x)
    return keras.Model(image, [layers.Dense(latent_dim)(x), layers.Dense(latent_dim)(x)], name="encoder")


def build_generator():
    latent = keras.Input((latent_dim,))
    mask = keras.Input((image_size, image_size, num_classes))
    x = layers.Reshape((4, 4, 4))(layers.Dense(4 * 4 * 4)(latent))
    x = layers.UpSampling2D(4)(x)
    x = layers.Concatenate()([x, mask])
    return keras.Model([latent, mask], layers.Conv2D(3, 3, padding="same", activation="tanh")(x),
                       name="generator")


def build_discriminator():
    mask = keras.Input((image_size, image_size, num_classes))
    image = keras.Input((image_size, image_size, 3))
    x = layers.Concatenate()([mask, image])
    x = layers.LeakyReLU(0.2)(layers.Conv2D(8, 4, strides=2, padding="same")(x))
    return keras.Model([mask, image], layers.Conv2D(1, 4, padding="same")(x), name="discriminator")


class GauGAN(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.discriminator = build_discriminator()
        self.generator = build_generator()
        self.encoder = build_encoder()
        self.sampler = GaussianSampler()
        self.combined_model = self.build_combined_generator()

    def build_combined_generator(self):
        self.discriminator.trainable = False
        latent_input = keras.Input((latent_dim,))
        mask_input = keras.Input((image_size, image_size, num_classes))
        generated_image = self.generator([latent_input, mask_input])
        discriminator_output = self.discriminator([mask_input, generated_image])
        return keras.Model([latent_input, mask_input], [discriminator_output, generated_image])

    def compile(self, gen_lr=1e-4, disc_lr=4e-4, **kwargs):
        super().compile(**kwargs)
        self.generator_optimizer = keras.optimizers.Adam(gen_lr, beta_1=0.0, beta_2=0.999)
        self.discriminator_optimizer = keras.optimizers.Adam(disc_lr, beta_1=0.0, beta_2=0.999)

    def train_discriminator(self, latent_vector, segmentation_map, real_image):
        fake_images = self.generator([latent_vector, segmentation_map])
        with tf.GradientTape() as gradient_tape:
            pred_fake = self.discriminator([segmentation_map, fake_images])
            pred_real = self.discriminator([segmentation_map, real_image])
            total_loss = 0.5 * (tf.reduce_mean(tf.nn.relu(1.0 + pred_fake))
                                + tf.reduce_mean(tf.nn.relu(1.0 - pred_real)))
        self.discriminator.trainable = True
        gradients = gradient_tape.gradient(total_loss, self.discriminator.trainable_variables)
        self.discriminator_optimizer.apply_gradients(zip(gradients, self.discriminator.trainable_variables))
        return total_loss

    def train_generator(self, latent_vector, segmentation_map, mean, variance):
        self.discriminator.trainable = False
        with tf.GradientTape() as tape:
            fake_d_output, fake_image = self.combined_model([latent_vector, segmentation_map])
            g_loss = -tf.reduce_mean(fake_d_output)
            kl_loss = 0.1 * -0.5 * tf.reduce_sum(1 + variance - tf.square(mean) - tf.exp(variance))
            total_loss = g_loss + kl_loss
        all_trainable_variables = self.combined_model.trainable_variables + self.encoder.trainable_variables
        gradients = tape.gradient(total_loss, all_trainable_variables)
        self.generator_optimizer.apply_gradients(zip(gradients, all_trainable_variables))
        return total_loss

    def train_step(self, data):
        segmentation_map, image = data
        mean, variance = self.encoder(image)
        latent_vector = self.sampler([mean, variance])
        discriminator_loss = self.train_discriminator(latent_vector, segmentation_map, image)
        generator_loss = self.train_generator(latent_vector, segmentation_map, mean, variance)
        return {"disc_loss": discriminator_loss, "gen_loss": generator_loss}


labels = np.random.randint(0, num_classes, size=(2 * batch_size, image_size, image_size))
segmentation_maps = np.eye(num_classes, dtype="float32")[labels]
images = np.random.uniform(-1, 1, size=(2 * batch_size, image_size, image_size, 3)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((segmentation_maps, images)).batch(batch_size)

gaugan = GauGAN()
gaugan.compile()
gaugan.fit(dataset, epochs=1, verbose=0)
