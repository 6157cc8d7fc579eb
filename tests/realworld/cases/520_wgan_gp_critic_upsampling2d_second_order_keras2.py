"""Real-world case 520.

Source: https://github.com/tensorflow/tensorflow/issues/33751
Bug: a WGAN-GP whose critic contains a resize layer (here the common
UpSampling2D + Conv2D block, as in the follow-up report tensorflow#43648 where
the user had just replaced Conv2DTranspose by it). The gradient penalty needs
the critic's input gradient differentiated a second time; the gradient of the
nearest-neighbour resize is the op ResizeNearestNeighborGrad, which has no
gradient of its own, so tape.gradient(d_loss, critic.trainable_variables)
raises LookupError "gradient registry has no entry for: ResizeNearestNeighborGrad".
Setting: GAN (WGAN-GP), tf.keras (Keras 2) functional models, nested GradientTapes, eager.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.random.set_seed(0)
np.random.seed(0)


def make_generator():
    z = layers.Input((16,))
    x = layers.Dense(4 * 4 * 16, name="g_dense")(z)
    x = layers.Reshape((4, 4, 16))(x)
    x = layers.Conv2DTranspose(8, 4, strides=2, padding="same", name="g_up1")(x)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Conv2DTranspose(1, 4, strides=2, padding="same", activation="tanh", name="g_up2")(x)
    return tf.keras.Model(z, x, name="generator")


def make_critic():
    img = layers.Input((16, 16, 1))
    x = layers.Conv2D(8, 3, strides=2, padding="same", name="c_down1")(img)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same", name="c_down2")(x)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.UpSampling2D(size=2)(x)
    x = layers.Conv2D(8, 3, padding="same", name="c_up")(x)
    x = layers.LeakyReLU(0.2)(x)
    scores = layers.Conv2D(1, 3, padding="same", use_bias=False, name="c_out")(x)  # patch scores
    return tf.keras.Model(img, scores, name="critic")


generator, critic = make_generator(), make_critic()
critic_optimizer = tf.keras.optimizers.Adam(1e-4, beta_1=0.5, beta_2=0.9)
real_images = tf.constant(np.random.uniform(-1, 1, (8, 16, 16, 1)).astype("float32"))
noise = tf.random.normal((8, 16))


def gradient_penalty(real, fake):
    alpha = tf.random.uniform([real.shape[0], 1, 1, 1], 0.0, 1.0)
    interpolated = real + alpha * (fake - real)
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(interpolated)
        pred = critic(interpolated, training=True)
    grads = gp_tape.gradient(pred, [interpolated])[0]
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
    return tf.reduce_mean((norm - 1.0) ** 2)


with tf.GradientTape() as tape:
    fake_images = generator(noise, training=True)
    d_cost = tf.reduce_mean(critic(fake_images, training=True)) - tf.reduce_mean(critic(real_images, training=True))
    gp = gradient_penalty(real_images, fake_images)
    d_loss = d_cost + 10.0 * gp
d_grads = tape.gradient(d_loss, critic.trainable_variables)
critic_optimizer.apply_gradients(zip(d_grads, critic.trainable_variables))
print("critic loss:", float(d_loss))
