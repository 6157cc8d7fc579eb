"""Clean control 690 (look-alike of case 290).

Source: https://github.com/bermanmaxim/LovaszSoftmax/issues/12
The same mini U-Net trained with a soft Jaccard loss: the intersection and
union are computed from the softmax probabilities themselves (no argmax), so
the loss is differentiable and every variable gets a gradient.
Setting: Keras 3 functional mini U-Net, custom keras.losses.Loss subclass built
from keras.ops (one_hot), model.compile(loss=...), model.fit.
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)
NUM_CLASSES = 3


class JaccardLoss(keras.losses.Loss):
    def call(self, y_true, y_pred):
        y_pred_onehot = y_pred  # soft assignment: the probabilities themselves
        y_true_onehot = ops.one_hot(ops.cast(y_true[..., 0], "int32"), NUM_CLASSES)
        intersection = ops.sum(y_true_onehot * y_pred_onehot, axis=(1, 2))
        union = ops.sum(y_true_onehot + y_pred_onehot, axis=(1, 2)) - intersection
        return 1.0 - ops.mean((intersection + 1.0) / (union + 1.0), axis=-1)


inputs = keras.Input((16, 16, 3))
c1 = layers.Conv2D(8, 3, padding="same", activation="relu", name="enc_conv")(inputs)
p1 = layers.MaxPooling2D()(c1)
c2 = layers.Conv2D(16, 3, padding="same", activation="relu", name="bottleneck_conv")(p1)
u1 = layers.Concatenate()([layers.UpSampling2D()(c2), c1])
c3 = layers.Conv2D(8, 3, padding="same", activation="relu", name="dec_conv")(u1)
outputs = layers.Conv2D(NUM_CLASSES, 1, activation="softmax", name="probas")(c3)
model = keras.Model(inputs, outputs, name="unet")
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=JaccardLoss())

images = np.random.rand(8, 16, 16, 3).astype("float32")
masks = np.random.randint(0, NUM_CLASSES, size=(8, 16, 16, 1)).astype("float32")
history = model.fit(images, masks, batch_size=8, epochs=3, verbose=0)
print("loss:", history.history["loss"])
