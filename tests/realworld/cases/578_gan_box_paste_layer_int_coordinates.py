"""Real-world case 578.

Source: https://github.com/tensorflow/tensorflow/issues/42244
Bug: a GAN-style model whose generator outputs a box (top-left and
bottom-right corners); a weightless custom layer pastes the box onto a canvas
before the discriminator sees it. The layer turns the corners into integer
pixel coordinates and writes zeros into a tf.Variable canvas at those slices.
Integer coordinates carry no gradient (and the values written do not depend
on the generator at all), so the generator gets no gradient:
"No gradients provided for any variable" for every generator weight.
Setting: GAN, custom eager training loop, weightless custom Keras layer in the middle.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class ImagePaste(layers.Layer):
    def __init__(self, canvas_size=24, **kwargs):
        super().__init__(**kwargs)
        self.canvas_size = canvas_size

    def call(self, input_data, t_val=255.0):
        positions = tf.convert_to_tensor(input_data)
        positions = tf.reshape(positions, [-1, 2, 2])
        batch_s = positions.shape[0]
        canvas = tf.Variable(tf.ones([batch_s, self.canvas_size, self.canvas_size, 1]))
        corners = tf.cast(positions * self.canvas_size, tf.int32)
        for i in range(batch_s):
            y0, x0 = corners[i, 0, 0], corners[i, 0, 1]
            y1, x1 = corners[i, 1, 0], corners[i, 1, 1]
            canvas[i, y0:y1, x0:x1, :].assign(tf.zeros_like(canvas[i, y0:y1, x0:x1, :]))
        return canvas * t_val / 255.0


latent_dim, batch_size = 8, 16
generator = keras.Sequential([
    keras.Input((latent_dim,)),
    layers.Dense(32, activation="relu"),
    layers.Dense(32, activation="relu"),
    layers.Dense(4, activation="sigmoid"),
], name="generator")
discriminator = keras.Sequential([
    keras.Input((24, 24, 1)),
    layers.Conv2D(8, 3, strides=2, activation="relu"),
    layers.Flatten(),
    layers.Dense(1),
], name="discriminator")
paste = ImagePaste()
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt = keras.optimizers.Adam(1e-3)
g_opt = keras.optimizers.Adam(1e-3)

rng = np.random.default_rng(0)


def real_boxes(n):
    top_left = rng.uniform(0.1, 0.4, size=(n, 2))
    return np.concatenate([top_left, top_left + 0.4], axis=1).astype("float32")


for step in range(2):
    real_images = paste(real_boxes(batch_size))
    noise = tf.random.normal((batch_size, latent_dim))
    with tf.GradientTape() as d_tape:
        fake_images = paste(generator(noise))
        d_loss = bce(tf.ones((batch_size, 1)), discriminator(real_images)) + \
            bce(tf.zeros((batch_size, 1)), discriminator(fake_images))
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))

    noise = tf.random.normal((batch_size, latent_dim))
    with tf.GradientTape() as g_tape:
        fake_images = paste(generator(noise))
        g_loss = bce(tf.ones((batch_size, 1)), discriminator(fake_images))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    print("step", step, "d_loss", float(d_loss), "g_loss", float(g_loss))
