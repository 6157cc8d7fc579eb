"""Clean control 817 (look-alike of case 417).

Source: https://github.com/tensorflow/tensorflow/issues/56968
The Keras Grad-CAM recipe: the class score is a slice of the prediction
tensor; the class index may come from argmax (an integer, used only to pick
the column), and the gradient reaches the conv activations.
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
    pred_index = tf.argmax(preds[0])
    class_channel = preds[:, pred_index]
grads = tape.gradient(class_channel, last_conv_layer_output)
print("grads:", grads.shape)
