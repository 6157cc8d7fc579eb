"""Clean twin of case 556.

Source: https://github.com/tensorflow/tensorflow/issues/36596
Fix: write the custom focal-style loss with TensorFlow ops on the prediction
tensor (no .numpy(), no np.*), so the saliency d(loss)/d(image) exists.
Setting: saliency / input gradient, eager GradientTape w.r.t. a watched input.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

model = keras.Sequential(
    [
        keras.Input(shape=(32, 32, 3)),
        layers.Conv2D(16, 3, padding="same", activation="relu", name="block1_conv1"),
        layers.Conv2D(16, 3, padding="same", activation="relu", name="block1_conv2"),
        layers.MaxPooling2D(name="block1_pool"),
        layers.Conv2D(32, 3, padding="same", activation="relu", name="block2_conv1"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(10, activation="softmax", name="predictions"),
    ],
    name="small_vgg",
)

rng = np.random.default_rng(0)
image = tf.convert_to_tensor(rng.random((1, 32, 32, 3)).astype("float32"))
label = 3


def focal_cross_entropy(label, predictions, gamma=2.0):
    p_true = tf.clip_by_value(predictions[:, label], 1e-7, 1.0)
    return -tf.reduce_mean((1.0 - p_true) ** gamma * tf.math.log(p_true))


with tf.GradientTape() as tape:
    tape.watch(image)
    predictions = model(image)
    loss = focal_cross_entropy(label, predictions)
saliency = tape.gradient(loss, image)
if saliency is None:
    print("None gradients for: ['image']")
else:
    print("saliency max", float(tf.reduce_max(tf.abs(saliency))))
