"""Clean control 808 (look-alike of case 408).

Source: https://github.com/tensorflow/tensorflow/issues/27526
The glimpse is cropped with tf.image.crop_and_resize from float boxes built
from the locator output: crop_and_resize is differentiable w.r.t. the boxes,
so the locator trains. Same models, mixed_float16 policy.
"""
import keras
import numpy as np
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
keras.utils.set_random_seed(0)
G = 4
locator = keras.Sequential([keras.Input((16, 16, 1)), keras.layers.Flatten(),
                            keras.layers.Dense(2, activation="sigmoid", name="loc")], name="locator")
classifier = keras.Sequential([keras.Input((G, G, 1)), keras.layers.Flatten(),
                               keras.layers.Dense(3, name="cls")], name="classifier")
optimizer = keras.optimizers.Adam(1e-3)

images = np.random.rand(8, 16, 16, 1).astype("float32")
labels = np.random.randint(0, 3, 8)

with tf.GradientTape() as tape:
    loc = tf.cast(locator(images), tf.float32) * (1.0 - G / 16)
    boxes = tf.concat([loc, loc + G / 16], axis=-1)
    glimpse = tf.image.crop_and_resize(images, boxes, tf.range(8), (G, G))
    logits = tf.cast(classifier(glimpse), tf.float32)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
variables = locator.trainable_variables + classifier.trainable_variables
grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
print("loss", float(loss))
