"""Real-world control 1103 (twin of case 1083).

Source: https://github.com/tensorflow/tensorflow/issues/62797
Fixed: as in the keras.io Grad-CAM tutorial the answer points to, one
`grad_model` returns both the last convolution's activations and the class
scores from a single call, so the class score is computed from the watched
activations and the gradient exists.
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
grad_model = keras.Model(model.inputs, [last_conv_layer.output, model.output])

img = np.random.rand(1, 32, 32, 3).astype("float32")
with tf.GradientTape() as tape:
    last_conv_output, preds = grad_model(img)
    top_class_index = tf.argmax(preds[0])
    class_channel = preds[:, top_class_index]
grads = tape.gradient(class_channel, last_conv_output)
print("grads:", grads)
if grads is not None:
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.reduce_sum(last_conv_output[0] * pooled_grads, axis=-1)
    heatmap = tf.maximum(heatmap, 0) / (tf.reduce_max(heatmap) + 1e-8)
    print("heatmap shape:", heatmap.shape)
