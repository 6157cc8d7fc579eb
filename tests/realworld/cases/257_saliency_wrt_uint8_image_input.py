"""Real-world case 257.

Source: https://github.com/deepchem/deepchem/pull/1445
Bug: the diabetic-retinopathy example declared its image input as uint8 and
converted it to float inside the model with tf.image.convert_image_dtype;
saliency maps take the gradient of a class score with respect to that input,
"but you can't take derivatives with respect to an integer": TensorFlow
warns that the watched tensor must be floating and the saliency map is None.
Setting: Keras 3 functional model with a uint8 input and in-model
conversion, eager GradientTape saliency (attribution) loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)

inputs = keras.Input((16, 16, 3), dtype="uint8")
x = keras.layers.Lambda(lambda t: tf.image.convert_image_dtype(t, tf.float32))(inputs)
x = keras.layers.Conv2D(4, 3, activation="relu")(x)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(5)(x)
model = keras.Model(inputs, outputs)

image = tf.constant(np.random.randint(0, 256, size=(1, 16, 16, 3)).astype("uint8"))
target_class = 2

with tf.GradientTape() as tape:
    tape.watch(image)
    score = model(image)[:, target_class]
saliency = tape.gradient(score, image)
print("saliency map:", saliency)
