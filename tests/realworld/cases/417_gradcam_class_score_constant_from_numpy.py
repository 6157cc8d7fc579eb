"""Real-world case 417.

Source: https://github.com/tensorflow/tensorflow/issues/56968
Bug: in a Grad-CAM step the class score handed to tape.gradient is a
tf.constant (`class_channel = tf.constant([4.4328732])` in the report), so
"I don't understand why the code below output grads to be None": a constant
does not depend on the conv activations. Here the constant is built from the
prediction's NumPy value, the way such a number ends up in code.
Setting: Keras 3 functional CNN, Grad-CAM grad model with two outputs, eager.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
inputs = keras.Input((16, 16, 3))
conv = keras.layers.Conv2D(8, 3, activation="relu", name="last_conv")(inputs)
pooled = keras.layers.GlobalAveragePooling2D()(conv)
outputs = keras.layers.Dense(4, name="predictions")(pooled)
grad_model = keras.Model(inputs, [conv, outputs])

img = np.random.rand(1, 16, 16, 3).astype("float32")
with tf.GradientTape() as tape:
    last_conv_layer_output, preds = grad_model(img)
    pred_index = int(tf.argmax(preds[0]))
    class_channel = tf.constant(preds[:, pred_index].numpy())
grads = tape.gradient(class_channel, last_conv_layer_output)
print("grads:", grads)
