"""Broken: the GAN's generator step asks for the gradients of the wrong model's variables.

Besides the generator and the discriminator, the GAN keeps ``generator_ema``, an
exponential moving average of the generator used for sampling (as StyleGAN and BigGAN
do). The generator step asks the tape for ``generator_ema.trainable_variables``: that
model never ran inside the tape, so the loss does not depend on its variables at all,
every gradient is ``None`` and ``apply_gradients`` stops with
``ValueError: No gradients provided for any variable.``

(Asking for the *discriminator's* variables in the generator step would not give None:
the generator loss does go through the discriminator. It would silently train the
discriminator to be fooled instead; gradcheck cannot see that one.)

    python examples/gallery/gan_wrong_variables_broken.py     # the ValueError
    gradcheck examples/gallery/gan_wrong_variables_broken.py  # GC108 at the tape.gradient line

The fix (gan_wrong_variables_fixed.py): ``generator.trainable_variables``.
"""

import keras
import numpy as np
import tensorflow as tf

LATENT_DIM = 4
BATCH = 128
REAL_MEAN, REAL_STD = 3.0, 0.5
EMA_DECAY = 0.99


def make_generator(name):
    return keras.Sequential(
        [keras.Input(shape=(LATENT_DIM,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)],
        name=name,
    )


def make_discriminator():
    return keras.Sequential(
        [keras.Input(shape=(1,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)],
        name="discriminator",
    )


def real_batch(rng):
    return rng.normal(REAL_MEAN, REAL_STD, size=(BATCH, 1)).astype("float32")


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    generator, discriminator = make_generator("generator"), make_discriminator()
    generator_ema = make_generator("generator_ema")
    generator_ema.set_weights(generator.get_weights())
    d_optimizer, g_optimizer = keras.optimizers.Adam(1e-2), keras.optimizers.Adam(1e-2)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(real):
        noise = tf.random.normal([BATCH, LATENT_DIM])
        fake = generator(noise)  # the discriminator step does not train the generator
        with tf.GradientTape() as tape:
            real_logits, fake_logits = discriminator(real, training=True), discriminator(fake, training=True)
            d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        d_vars = discriminator.trainable_variables
        d_optimizer.apply_gradients(zip(tape.gradient(d_loss, d_vars), d_vars))

        with tf.GradientTape() as tape:
            fake_logits = discriminator(generator(noise, training=True), training=True)
            g_loss = bce(tf.ones_like(fake_logits), fake_logits)  # fool the discriminator
        g_vars = generator_ema.trainable_variables  # expect: GC108
        g_grads = tape.gradient(g_loss, g_vars)
        g_optimizer.apply_gradients(zip(g_grads, g_vars))

        for ema_weight, weight in zip(generator_ema.weights, generator.weights):
            ema_weight.assign(EMA_DECAY * ema_weight + (1.0 - EMA_DECAY) * weight)
        return d_loss, g_loss

    for step in range(1, 501):
        d_loss, g_loss = train_step(real_batch(rng))
        if step == 1 or step % 100 == 0:
            samples = generator_ema(tf.random.normal([1000, LATENT_DIM])).numpy()
            print(
                f"step {step}: d_loss {float(d_loss):.3f} g_loss {float(g_loss):.3f} | "
                f"samples mean {samples.mean():.2f} std {samples.std():.2f} (real: {REAL_MEAN} {REAL_STD})"
            )
