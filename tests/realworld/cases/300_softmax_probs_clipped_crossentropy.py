"""Real-world case 300.

Source: https://github.com/keras-team/keras/issues/6983
Bug: a classifier whose softmax goes straight into the categorical cross-entropy is stuck
from the first epoch; the reporter fixed it by returning the raw logits and using
softmax_cross_entropy_with_logits. Here the images are raw pixels (0-255), so the logits
are in the hundreds and the softmax is saturated: every probability is exactly 0 or 1,
which the loss clips to [1e-7, 1 - 1e-7], where the gradient is exactly zero.
Setting: Keras 3 subclassed model whose call() applies tf.nn.softmax, model.fit with a
hand-written class-weighted categorical cross-entropy that clips the probabilities.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class PixelClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.flatten = keras.layers.Flatten()
        self.hidden = keras.layers.Dense(64, activation="relu")
        self.classes = keras.layers.Dense(10)

    def call(self, images):
        logits = self.classes(self.hidden(self.flatten(images)))
        return tf.nn.softmax(logits)


def weighted_categorical_crossentropy(y_true, y_pred):
    class_weights = tf.constant([1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 2.0, 1.0])
    y_pred = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
    return -tf.reduce_sum(class_weights * y_true * tf.math.log(y_pred), axis=-1)


model = PixelClassifier()
model.compile(optimizer="adam", loss=weighted_categorical_crossentropy, metrics=["accuracy"])
images = np.random.randint(0, 256, size=(128, 28, 28)).astype("float32")  # raw pixels, not / 255
labels = keras.utils.to_categorical(np.random.randint(0, 10, size=128), 10)
model.fit(images, labels, batch_size=32, epochs=3, shuffle=False, verbose=0)
