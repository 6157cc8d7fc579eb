"""Real-world case 304.

Source: https://github.com/keras-team/keras/issues/13006
Bug: "training and validation accuracy always converges to 0.5", the loss frozen at 7.9712
from the second epoch on: 7.97 is half of -log(1e-7) = 16.12, the binary cross-entropy of a
prediction saturated at the wrong end, which the loss clips to [1e-7, 1 - 1e-7], where the
gradient is exactly zero. The images were not rescaled, so the sigmoid's input is huge.
Setting: Keras 3 subclassed CNN whose call() ends in tf.sigmoid, model.fit with a
hand-written binary focal loss that clips the probabilities, images left in 0-255.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(1)


class BinaryCNN(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = keras.layers.Conv2D(8, 3, activation="relu")
        self.pool = keras.layers.GlobalAveragePooling2D()
        self.score = keras.layers.Dense(1)

    def call(self, images):
        return tf.sigmoid(self.score(self.pool(self.conv(images))))


def binary_focal_loss(y_true, y_pred, gamma=2.0):
    p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
    p_t = y_true * p + (1.0 - y_true) * (1.0 - p)
    return -tf.reduce_mean(tf.pow(1.0 - p_t, gamma) * tf.math.log(p_t), axis=-1)


model = BinaryCNN()
model.compile(optimizer="adam", loss=binary_focal_loss, metrics=["accuracy"])
images = np.random.randint(0, 256, size=(64, 16, 16, 3)).astype("float32")
labels = np.random.randint(0, 2, size=(64, 1)).astype("float32")
model.fit(images, labels, batch_size=32, epochs=3, verbose=0)
