"""Clean control 664 (look-alike of case 264).

Source: https://github.com/j-c-carr/lightcones/issues/21
The same 3D net trained with the soft Dice loss on the sigmoid
probabilities; the threshold is applied only when evaluating, so every
variable gets a gradient.
Setting: Keras 3 functional 3D conv net with instance normalisation
(GroupNormalization with one group per channel), loss closure, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf
from keras import layers

keras.utils.set_random_seed(0)


def dice_loss(smooth=1.0):
    def loss(y_true, y_pred):
        intersection = tf.reduce_sum(y_true * y_pred)
        return 1.0 - (2.0 * intersection + smooth) / (tf.reduce_sum(y_true) + tf.reduce_sum(y_pred) + smooth)

    return loss


inputs = keras.Input((8, 8, 8, 1))
x = layers.Conv3D(4, 3, padding="same")(inputs)
x = layers.GroupNormalization(groups=-1)(x)
x = layers.Activation("relu")(x)
outputs = layers.Conv3D(1, 1, activation="sigmoid")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss=dice_loss())

x_train = np.random.rand(8, 8, 8, 8, 1).astype("float32")
y_train = (np.random.rand(8, 8, 8, 8, 1) > 0.5).astype("float32")
model.fit(x_train, y_train, batch_size=4, epochs=1, verbose=0)
