"""Real-world case 271.

Source: https://github.com/tensorflow/tensorflow/issues/42244
Bug: a GAN whose generator outputs box corners (top-left, bottom-right) and a
weightless ImagePaste layer that draws the box on a canvas before the
discriminator; the layer turns the coordinates into integer pixel indices
(tf.cast to int32) and compares them with the pixel grid, so the canvas is a
piecewise-constant function of the generator's output and the combined model
(discriminator frozen) has no gradient for any generator weight.
Setting: GAN, Keras 2 (tf.keras) combined model, train_on_batch.
"""
import numpy as np
import tensorflow as tf

np.random.seed(0); tf.random.set_seed(0)  # tf_keras 2.16 set_random_seed fails on Python 3.12
SIZE, LATENT, BATCH = 16, 8, 8


class ImagePaste(tf.keras.layers.Layer):
    def call(self, positions):
        corners = tf.cast(positions * SIZE, tf.int32)
        y0, x0, y1, x1 = tf.unstack(corners[:, :, None, None], axis=1)
        rows = tf.range(SIZE)[None, :, None]
        cols = tf.range(SIZE)[None, None, :]
        inside = (rows >= y0) & (rows < y1) & (cols >= x0) & (cols < x1)
        return tf.cast(inside, tf.float32)[..., None]


generator = tf.keras.Sequential([
    tf.keras.layers.Dense(16, activation="relu", input_shape=(LATENT,), name="gen_hidden"),
    tf.keras.layers.Dense(4, activation="sigmoid", name="gen_box"),
], name="generator")
discriminator = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(SIZE, SIZE, 1)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
], name="discriminator")
discriminator.compile(optimizer="adam", loss="binary_crossentropy")
discriminator.trainable = False
z = tf.keras.Input(shape=(LATENT,))
gan = tf.keras.Model(z, discriminator(ImagePaste()(generator(z))))
gan.compile(optimizer="adam", loss="binary_crossentropy")


def real_boxes(n):
    lo = np.random.uniform(0.0, 0.4, size=(n, 2))
    return np.concatenate([lo, lo + 0.5], axis=1).astype("float32")


paste = ImagePaste()
for step in range(2):
    noise = np.random.normal(size=(BATCH, LATENT)).astype("float32")
    fake = paste(generator(noise))
    x = np.concatenate([paste(real_boxes(BATCH)), fake])
    y = np.concatenate([np.ones((BATCH, 1)), np.zeros((BATCH, 1))])
    d_loss = discriminator.train_on_batch(x, y)
    g_loss = gan.train_on_batch(noise, np.ones((BATCH, 1)))
    print(step, d_loss, g_loss)
