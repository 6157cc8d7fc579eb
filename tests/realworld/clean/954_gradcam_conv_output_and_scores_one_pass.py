"""Clean twin of case 554.

Source: https://github.com/tensorflow/tensorflow/issues/62797
Fix: build one grad model whose outputs are the last convolution's
activations AND the class scores, so both come from the same forward pass and
the scores depend on the activations (as in the keras.io Grad-CAM example).
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
    grad_model = keras.Model(model.inputs, [model.get_layer(layer_name).output, model.output])
    with tf.GradientTape() as tape:
        last_conv_output, preds = grad_model(img)
        tape.watch(last_conv_output)
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
print("heatmap", tuple(heatmap.shape), float(tf.reduce_max(heatmap)))
