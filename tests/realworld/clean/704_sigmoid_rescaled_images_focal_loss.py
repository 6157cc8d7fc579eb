"""Clean control 704 (look-alike of case 304).

Source: https://github.com/keras-team/keras/issues/13006
The same CNN, sigmoid output and clipping focal loss, with the images rescaled to [0, 1]
by a Rescaling layer: the sigmoid is not saturated.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(1)


class BinaryCNN(keras.Model):
    def __init__(self):
        super().__init__()
        self.rescale = keras.layers.Rescaling(1.0 / 255)
        self.conv = keras.layers.Conv2D(8, 3, activation="relu")
        self.pool = keras.layers.GlobalAveragePooling2D()
        self.score = keras.layers.Dense(1)

    def call(self, images):
        return tf.sigmoid(self.score(self.pool(self.conv(self.rescale(images)))))


def binary_focal_loss(y_true, y_pred, gamma=2.0):
    p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
    p_t = y_true * p + (1.0 - y_true) * (1.0 - p)
    return -tf.reduce_mean(tf.pow(1.0 - p_t, gamma) * tf.math.log(p_t), axis=-1)


model = BinaryCNN()
model.compile(optimizer="adam", loss=binary_focal_loss, metrics=["accuracy"])
images = np.random.randint(0, 256, size=(64, 16, 16, 3)).astype("float32")
labels = np.random.randint(0, 2, size=(64, 1)).astype("float32")
model.fit(images, labels, batch_size=32, epochs=3, verbose=0)
