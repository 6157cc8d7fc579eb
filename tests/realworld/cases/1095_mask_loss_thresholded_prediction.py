"""Real-world case 1095.

Source: http://xiaobeizi.cn/x/6JuuQQjucd
Bug: a model predicts a binary mask (sigmoid per pixel) that is applied to
the input image. Because the MSE-trained mask stays well below 1, the user
overrides the loss to compare the *thresholded* prediction with the target:
tf.where(y_pred >= 0.5, 1.0, 0.0). The comparison and the constant branches
carry no gradient back to y_pred, so fit() fails with "No gradients provided
for any variable".
Setting: Keras 3 subclassed Model overriding compute_loss(), compile() + fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class MaskNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = layers.Conv2D(8, 3, padding="same", activation="relu", name="mask_conv1")
        self.conv2 = layers.Conv2D(8, 3, padding="same", activation="relu", name="mask_conv2")
        self.head = layers.Conv2D(1, 1, activation="sigmoid", name="mask_head")

    def call(self, x):
        return self.head(self.conv2(self.conv1(x)))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        tresholded_pred = tf.where(y_pred >= 0.5, 1.0, 0.0)
        sq_diff = tf.square(y - tresholded_pred)
        return tf.reduce_mean(sq_diff)


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
images = rng.random((32, 16, 16, 3)).astype("float32")
masks = (images.mean(axis=-1, keepdims=True) > 0.5).astype("float32")

model = MaskNet()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(images, masks, batch_size=8, epochs=2, verbose=2)
