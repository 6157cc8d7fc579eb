"""Real-world case 1091.

Source: https://github.com/Golbstein/Keras-segmentation-deeplab-v3.1/issues/6
Bug: a semantic-segmentation model is trained with the repository's Jaccard
(IoU) score turned into a loss. The score hard-labels every pixel with
K.argmax over the class axis before counting the intersection and union, so
the loss has no path back to the softmax output: fit() raises "No gradients
provided for any variable" (the old Keras message named K.argmax).
Setting: tf_keras (Keras 2) functional conv segmenter, custom loss, compile() + fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

NUM_CLASSES = 3


def jaccard_loss(y_true, y_pred):
    pred_labels = K.argmax(y_pred, axis=-1)
    pred_onehot = K.one_hot(pred_labels, NUM_CLASSES)
    true_onehot = K.one_hot(K.cast(y_true[..., 0], "int32"), NUM_CLASSES)
    inter = K.sum(true_onehot * pred_onehot, axis=(1, 2))
    union = K.sum(true_onehot + pred_onehot, axis=(1, 2)) - inter
    return 1.0 - K.mean((inter + 1.0) / (union + 1.0))


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
images = rng.random((32, 16, 16, 3)).astype("float32")
masks = (images[..., :1] * NUM_CLASSES).astype("int32").clip(0, NUM_CLASSES - 1)

inp = keras.Input(shape=(16, 16, 3))
x = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="enc_conv")(inp)
x = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="dec_conv")(x)
out = keras.layers.Conv2D(NUM_CLASSES, 1, activation="softmax", name="classifier")(x)
model = keras.Model(inp, out)

model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=jaccard_loss)
model.fit(images, masks, batch_size=8, epochs=2, verbose=2)
