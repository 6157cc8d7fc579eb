"""Real-world case 554.

Source: https://github.com/tensorflow/tensorflow/issues/62797
Bug: a Grad-CAM heatmap for a grayscale profile classifier returns None:
grads = tape.gradient(preds[:, top_class_index], last_conv_output). The
maintainer's diagnosis was that the two arguments "are not connected and there
is no differentiable path connecting these args". In this reproduction the
activations come from one sub-model and the class scores from a second,
independent forward pass of the full model, so the watched activations never
feed the score.
Setting: Grad-CAM / saliency, eager GradientTape w.r.t. an intermediate tensor.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

inputs = keras.Input(shape=(48, 40, 1))
x = layers.Conv2D(8, 3, activation="relu", padding="same", name="conv_1")(inputs)
x = layers.MaxPooling2D()(x)
x = layers.Conv2D(16, 3, activation="relu", padding="same", name="last_conv")(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(5, name="predictions")(x)
model = keras.Model(inputs, outputs, name="profile_cnn")

rng = np.random.default_rng(0)
image_array = rng.random((48, 40, 1)).astype("float32")


def grad_cam(model, image_array, layer_name="last_conv"):
    img = tf.convert_to_tensor(image_array[None, ...])
    conv_model = keras.Model(model.inputs, model.get_layer(layer_name).output)
    with tf.GradientTape() as tape:
        last_conv_output = conv_model(img)
        tape.watch(last_conv_output)
        preds = model(img)
        top_class_index = int(tf.argmax(preds[0]))
        class_channel = preds[:, top_class_index]
    grads = tape.gradient(class_channel, last_conv_output)
    if grads is None:
        print("None gradients for: ['last_conv_output']")
        return None
    pooled = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.reduce_sum(last_conv_output[0] * pooled, axis=-1)
    return tf.nn.relu(heatmap) / (tf.reduce_max(heatmap) + 1e-8)


heatmap = grad_cam(model, image_array)
