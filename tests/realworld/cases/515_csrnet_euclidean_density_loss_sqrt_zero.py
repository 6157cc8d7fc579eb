"""Real-world case 515.

Source: https://github.com/Neerajj9/CSRNet-keras/issues/22
Bug: a CSRNet-style crowd-counting network (ReLU density head) is trained with
the repository's pixel-wise "Euclidean distance" loss,
sqrt(sum(square(y_pred - y_true), axis=-1)). Density maps are zero almost
everywhere and the ReLU head outputs exact zeros there too, so the argument of
sqrt is exactly 0 on most pixels: the forward value is fine (0) but the
gradient of sqrt at 0 is inf, and inf * 0 = NaN reaches every weight. After the
first update all weights are NaN and, as in the report, the model's
predictions are NaN.
Setting: Keras 3 functional fully convolutional model, custom loss written
with keras.ops, compile() + fit().
"""
import numpy as np
import keras
from keras import layers, ops


def euclidean_distance_loss(y_true, y_pred):
    return ops.sqrt(ops.sum(ops.square(y_pred - y_true), axis=-1))


def density_maps(n, size, rng):
    maps = np.zeros((n, size, size, 1), dtype="float32")
    yy, xx = np.mgrid[0:size, 0:size]
    for i in range(n):
        for cy, cx in rng.integers(4, size - 4, size=(rng.integers(0, 4), 2)):
            maps[i, :, :, 0] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 4.0) / (4.0 * np.pi)
    maps[maps < 1e-4] = 0.0
    return maps


keras.utils.set_random_seed(0)
image = keras.Input(shape=(32, 32, 3), name="image")
x = layers.Conv2D(16, 3, padding="same", activation="relu", name="front_1")(image)
x = layers.Conv2D(16, 3, padding="same", activation="relu", name="front_2")(x)
x = layers.Conv2D(16, 3, padding="same", dilation_rate=2, activation="relu", name="back_1")(x)
x = layers.Conv2D(16, 3, padding="same", dilation_rate=2, activation="relu", name="back_2")(x)
density = layers.Conv2D(1, 1, activation="relu", name="density")(x)
model = keras.Model(image, density, name="csrnet_lite")
model.compile(optimizer=keras.optimizers.SGD(1e-3), loss=euclidean_distance_loss)

rng = np.random.default_rng(0)
images = rng.uniform(size=(32, 32, 32, 3)).astype("float32")
targets = density_maps(32, 32, rng)
model.fit(images, targets, batch_size=8, epochs=1, verbose=0)
counts = ops.convert_to_numpy(ops.sum(model(images[:4]), axis=(1, 2, 3)))
print("true counts:", targets[:4].sum(axis=(1, 2, 3)), "predicted counts:", counts)
