"""Real-world case 552.

Source: https://github.com/j-c-carr/lightcones/issues/21
Bug: "adding dice loss threshold as a hyperparameter": the Dice loss of a 3D
segmentation network binarises the prediction with
tf.cast(tf.greater(y_pred, threshold), tf.float32) before computing the
overlap. The comparison produces booleans, which carry no gradient, so the
loss does not depend differentiably on any weight and fit() raises
"No gradients provided for any variable: ['conv3d/kernel', ...]".
Setting: functional 3D conv net with instance normalisation,
model.compile(loss=dice_loss(threshold)) + model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
SHAPE = (16, 16, 16, 1)


def conv_block(x, filters):
    x = layers.Conv3D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.GroupNormalization(groups=-1)(x)
    return layers.Activation("relu")(x)


def build_model():
    inputs = keras.Input(SHAPE)
    c1 = conv_block(inputs, 8)
    p1 = layers.MaxPooling3D(2)(c1)
    c2 = conv_block(p1, 16)
    u1 = layers.UpSampling3D(2)(c2)
    m1 = layers.Concatenate()([u1, c1])
    c3 = conv_block(m1, 8)
    outputs = layers.Conv3D(1, 1, activation="sigmoid")(c3)
    return keras.Model(inputs, outputs)


def dice_loss(threshold=0.5, smooth=1.0):
    def loss(y_true, y_pred):
        y_pred = tf.cast(tf.greater(y_pred, threshold), tf.float32)
        intersection = tf.reduce_sum(y_true * y_pred, axis=[1, 2, 3, 4])
        union = tf.reduce_sum(y_true, axis=[1, 2, 3, 4]) + tf.reduce_sum(y_pred, axis=[1, 2, 3, 4])
        return 1.0 - (2.0 * intersection + smooth) / (union + smooth)
    return loss


rng = np.random.default_rng(0)
brightness = rng.normal(size=(16,) + SHAPE).astype("float32")
ionized = (brightness + 0.5 * rng.normal(size=brightness.shape) > 0.3).astype("float32")

model = build_model()
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=dice_loss(threshold=0.5))
history = model.fit(brightness, ionized, batch_size=4, epochs=2, verbose=0)
print("loss:", history.history["loss"])
