"""Real-world case 551.

Source: https://github.com/tensorflow/tensorflow/issues/14894
Bug: a histogram-matching loss: the histograms of the network's output and
of the reference images are taken with tf.histogram_fixed_width, cast to
float and compared with 2 * l2_loss. histogram_fixed_width returns integer
bin counts and has no gradient, so no variable is connected to the loss and
training stops with "No gradients provided for any variable".
Setting: tone-mapping CNN as a keras.Model subclass with a custom
train_step, model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
NBINS = 11
VALUE_RANGE = tf.constant([0.0, 1.0], dtype=tf.float32)


class ToneMapper(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = layers.Conv2D(8, 3, padding="same", activation="relu")
        self.conv2 = layers.Conv2D(8, 3, padding="same", activation="relu")
        self.to_gray = layers.Conv2D(1, 1, activation="sigmoid")

    def call(self, x):
        return self.to_gray(self.conv2(self.conv1(x)))

    def train_step(self, data):
        x, reference = data
        template_hist = tf.cast(tf.histogram_fixed_width(reference, VALUE_RANGE, nbins=NBINS), tf.float32)
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            source_hist = tf.cast(tf.histogram_fixed_width(y_pred, VALUE_RANGE, nbins=NBINS), tf.float32)
            loss = 2 * tf.nn.l2_loss(source_hist - template_hist) / tf.cast(tf.size(y_pred), tf.float32)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"histogram_loss": loss}


rng = np.random.default_rng(0)
raw = rng.uniform(0.0, 1.0, size=(32, 16, 16, 3)).astype("float32")
reference = (raw.mean(axis=-1, keepdims=True) ** 0.5).astype("float32")
model = ToneMapper()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(raw, reference, batch_size=8, epochs=2, verbose=0)
