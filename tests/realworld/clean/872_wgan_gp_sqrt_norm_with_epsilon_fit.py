"""Clean control 872 (look-alike of case 472).

Source: https://github.com/keras-team/keras-io/issues/910
The fix merged for the report (keras-io PR #2364): keras.backend.epsilon() is added under the
square root, so an interpolated sample where the ReLU critic's gradient is exactly zero
contributes a finite penalty gradient and the critic trains.
Setting: Keras 3 subclassed WGAN with a custom train_step run by model.fit, critic tape
plus a nested gradient-penalty tape, generator tape.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
LATENT_DIM, BATCH = 8, 64


def get_critic_model():
    img = keras.Input((4, 4, 1))
    x = keras.layers.Flatten()(img)
    x = keras.layers.Dense(4, activation="relu")(x)
    return keras.Model(img, keras.layers.Dense(1)(x), name="critic")


def get_generator_model():
    noise = keras.Input((LATENT_DIM,))
    x = keras.layers.Dense(16, activation="tanh")(noise)
    return keras.Model(noise, keras.layers.Reshape((4, 4, 1))(x), name="generator")


class WGAN(keras.Model):
    def __init__(self, discriminator, generator, discriminator_extra_steps=3, gp_weight=10.0):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.d_steps = discriminator_extra_steps
        self.gp_weight = gp_weight

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer

    def gradient_penalty(self, batch_size, real_images, fake_images):
        alpha = tf.random.uniform([batch_size, 1, 1, 1], 0.0, 1.0)
        interpolated = real_images + alpha * (fake_images - real_images)
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.discriminator(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]) + keras.backend.epsilon())
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            random_latent_vectors = tf.random.normal((batch_size, LATENT_DIM))
            with tf.GradientTape() as tape:
                fake_images = self.generator(random_latent_vectors, training=True)
                fake_logits = self.discriminator(fake_images, training=True)
                real_logits = self.discriminator(real_images, training=True)
                d_cost = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits)
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                d_loss = d_cost + gp * self.gp_weight
            d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
            for g in d_gradient:
                tf.debugging.assert_all_finite(g, "non-finite critic gradient")
            self.d_optimizer.apply_gradients(zip(d_gradient, self.discriminator.trainable_variables))

        random_latent_vectors = tf.random.normal((batch_size, LATENT_DIM))
        with tf.GradientTape() as tape:
            generated_images = self.generator(random_latent_vectors, training=True)
            gen_img_logits = self.discriminator(generated_images, training=True)
            g_loss = -tf.reduce_mean(gen_img_logits)
        gen_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
        for g in gen_gradient:
            tf.debugging.assert_all_finite(g, "non-finite generator gradient")
        self.g_optimizer.apply_gradients(zip(gen_gradient, self.generator.trainable_variables))
        return {"d_loss": d_loss, "g_loss": g_loss}


real = np.random.uniform(-1, 1, (4 * BATCH, 4, 4, 1)).astype("float32")
wgan = WGAN(get_critic_model(), get_generator_model())
wgan.compile(
    d_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5, beta_2=0.9),
    g_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5, beta_2=0.9),
)
history = wgan.fit(real, batch_size=BATCH, epochs=2, verbose=0)
losses = {k: [float(v) for v in vals] for k, vals in history.history.items()}
assert all(np.isfinite(v) for vals in losses.values() for v in vals), losses
print(losses)
