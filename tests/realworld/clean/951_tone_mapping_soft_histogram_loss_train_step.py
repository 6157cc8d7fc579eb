"""Clean control 951 (expected clean).

Look-alike of case 551: the histogram-matching loss uses a differentiable
soft histogram (a Gaussian kernel around each bin centre, summed over
pixels) instead of tf.histogram_fixed_width, so the loss depends smoothly on
the network's output.
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


def soft_histogram(values, nbins=NBINS, bandwidth=0.05):
    centers = tf.linspace(VALUE_RANGE[0], VALUE_RANGE[1], nbins)
    v = tf.reshape(values, [-1, 1])
    return tf.reduce_sum(tf.exp(-0.5 * tf.square((v - centers) / bandwidth)), axis=0)


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
        template_hist = soft_histogram(reference)
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            source_hist = soft_histogram(y_pred)
            loss = 2 * tf.nn.l2_loss(source_hist - template_hist) / tf.cast(tf.size(y_pred), tf.float32)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"histogram_loss": loss}


rng = np.random.default_rng(0)
raw = rng.uniform(0.0, 1.0, size=(32, 16, 16, 3)).astype("float32")
reference = (raw.mean(axis=-1, keepdims=True) ** 0.5).astype("float32")
model = ToneMapper()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
history = model.fit(raw, reference, batch_size=8, epochs=4, verbose=0)
print("loss:", history.history["histogram_loss"])
