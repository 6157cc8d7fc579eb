"""Real-world case 292.

Source: https://github.com/yingkaisha/keras-unet-collection/issues/7
Bug: a UNet 3+ with deep supervision has one output per decoder level plus the
final full-scale output; the user compiled it with one loss per output but one
loss_weights entry too few. tf.keras pairs losses and weights with zip, so the
last output (the final prediction) silently gets no loss at all: the layers
only that output depends on get no gradient ("Gradients do not exist for
variables ['unet3plus_fusion_conv_4_0/kernel:0', ...,
'unet3plus_output_final/kernel:0', 'unet3plus_output_final/bias:0']").
Setting: Keras 2 (tf_keras) functional multi-output segmentation model,
custom hybrid (cross-entropy + soft IoU) loss, model.fit.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

tf.random.set_seed(0)
N_LABELS = 2


def hybrid_loss(y_true, y_pred):
    cross_entropy = keras.losses.categorical_crossentropy(y_true, y_pred)
    intersection = tf.reduce_sum(y_true * y_pred, axis=[1, 2, 3])
    union = tf.reduce_sum(y_true + y_pred, axis=[1, 2, 3]) - intersection
    return tf.reduce_mean(cross_entropy, axis=[1, 2]) + 1.0 - (intersection + 1.0) / (union + 1.0)


inputs = keras.Input((16, 16, 3))
e1 = layers.Conv2D(8, 3, padding="same", activation="relu", name="down0")(inputs)
e2 = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="down1")(e1)
e3 = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="down2")(e2)
sup2 = layers.Conv2D(N_LABELS, 1, activation="softmax", name="output_sup2")(layers.UpSampling2D(4)(e3))
sup1 = layers.Conv2D(N_LABELS, 1, activation="softmax", name="output_sup1")(layers.UpSampling2D(2)(e2))
aggregate = layers.Concatenate()([e1, layers.UpSampling2D(2)(e2), layers.UpSampling2D(4)(e3)])
fusion = layers.Conv2D(8, 3, padding="same", activation="relu", name="fusion_conv")(aggregate)
final = layers.Conv2D(N_LABELS, 1, activation="softmax", name="output_final")(fusion)
unet3plus = keras.Model(inputs, [sup2, sup1, final], name="unet3plus")
unet3plus.compile(loss=[hybrid_loss, hybrid_loss, hybrid_loss], loss_weights=[0.25, 0.25],
                  optimizer=keras.optimizers.Adam(learning_rate=1e-3))

images = np.random.rand(8, 16, 16, 3).astype("float32")
masks = keras.utils.to_categorical(np.random.randint(0, N_LABELS, size=(8, 16, 16)), N_LABELS)
unet3plus.fit(images, [masks, masks, masks], batch_size=8, epochs=1, verbose=0)
