"""Real-world control 1115 (twin of case 1095).

Source: http://xiaobeizi.cn/x/6JuuQQjucd
Fixed: as the answer says, the loss compares the continuous sigmoid mask with
the target (binary cross-entropy pushes it towards 0/1); the 0.5 threshold is
applied only to the predictions after training.
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
        return tf.reduce_mean(keras.losses.binary_crossentropy(y, y_pred))


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
images = rng.random((32, 16, 16, 3)).astype("float32")
masks = (images.mean(axis=-1, keepdims=True) > 0.5).astype("float32")

model = MaskNet()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(images, masks, batch_size=8, epochs=2, verbose=2)
binary_masks = np.where(model.predict(images, verbose=0) >= 0.5, 1.0, 0.0)
print("predicted foreground fraction:", float(binary_masks.mean()))
