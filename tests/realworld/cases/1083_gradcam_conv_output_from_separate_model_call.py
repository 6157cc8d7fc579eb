"""Real-world case 1083.

Source: https://github.com/tensorflow/tensorflow/issues/62797
Bug: a Grad-CAM heat map. The last convolution's activations come from one
sub-model call (`last_conv_layer_model(img)`) and the class scores from a
second, separate call of the full model (`model(img)`). Both calls recompute
the convolution, so the watched `last_conv_output` is not on the path to
`preds`, and `tape.gradient(preds[:, top_class_index], last_conv_output)`
returns None (TensorFlow's reply: the two arguments are not connected).
Setting: tf_keras (Keras 2) functional CNN, eager GradientTape, gradient w.r.t. an intermediate tensor.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

np.random.seed(0)
tf.random.set_seed(0)
keras.utils.set_random_seed(0)

inputs = keras.Input((32, 32, 3))
x = layers.Conv2D(8, 3, activation="relu", padding="same")(inputs)
x = layers.MaxPooling2D()(x)
x = layers.Conv2D(16, 3, activation="relu", padding="same", name="last_conv")(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(5, activation="softmax")(x)
model = keras.Model(inputs, outputs)

last_conv_layer = model.get_layer("last_conv")
last_conv_layer_model = keras.Model(model.inputs, last_conv_layer.output)

img = np.random.rand(1, 32, 32, 3).astype("float32")
with tf.GradientTape() as tape:
    last_conv_output = last_conv_layer_model(img)
    tape.watch(last_conv_output)
    preds = model(img)
    top_class_index = tf.argmax(preds[0])
    class_channel = preds[:, top_class_index]
grads = tape.gradient(class_channel, last_conv_output)
print("grads:", grads)
if grads is not None:
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.reduce_sum(last_conv_output[0] * pooled_grads, axis=-1)
    heatmap = tf.maximum(heatmap, 0) / (tf.reduce_max(heatmap) + 1e-8)
    print("heatmap shape:", heatmap.shape)
