"""Clean control 657 (look-alike of case 257).

Source: https://github.com/deepchem/deepchem/pull/1445
The same classifier with a float32 input (the image is converted before it
reaches the model, as in the fix): the saliency map is the gradient of the
class score with respect to the float image.
Setting: Keras 3 functional model, eager GradientTape saliency loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)

inputs = keras.Input((16, 16, 3), dtype="float32")
x = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(5)(x)
model = keras.Model(inputs, outputs)

raw = tf.constant(np.random.randint(0, 256, size=(1, 16, 16, 3)).astype("uint8"))
image = tf.image.convert_image_dtype(raw, tf.float32)
target_class = 2

with tf.GradientTape() as tape:
    tape.watch(image)
    score = model(image)[:, target_class]
saliency = tape.gradient(score, image)
assert saliency is not None
