"""Real-world case 1044.

Source: https://github.com/keras-team/keras/issues/5881
Bug: Grad-CAM takes the gradient of the *softmax* probability of the class
with respect to the last conv block's output. The classifier is very
confident, float32 softmax returns exactly 1.0 for the class and exactly 0.0
for the others, and the derivative p*(1-p) is exactly zero: the gradient map
and the heat map are all zeros.
Setting: tf_keras (Keras 2) Sequential CNN, Grad-CAM with tf.GradientTape on a conv output.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

img_width, img_height = 32, 32
base_model = keras.Sequential([
    layers.Conv2D(16, 3, activation="relu", padding="same", input_shape=(img_width, img_height, 3)),
    layers.MaxPooling2D(),
    layers.Conv2D(32, 3, activation="relu", padding="same", name="block5_conv3"),
], name="base")
model = keras.Sequential([
    base_model,
    layers.Flatten(),
    layers.Dense(64, activation="relu"),
    layers.Dense(64, activation="relu"),
    layers.Dense(24, activation="softmax"),
])
# stand-in for the fine-tuned, over-confident weights
w, b = model.layers[-1].get_weights()
model.layers[-1].set_weights([w * 400.0, b])

inp = keras.Input(shape=(img_width, img_height, 3))
conv_outputs = base_model(inp)
x = conv_outputs
for layer in model.layers[1:]:
    x = layer(x)
grad_model = keras.Model(inp, [conv_outputs, x])

image = np.random.default_rng(0).uniform(0, 255, size=(1, img_width, img_height, 3)).astype("float32")
with tf.GradientTape() as tape:
    conv_out, preds = grad_model(image)
    class_idx = int(tf.argmax(preds[0]))
    class_score = preds[:, class_idx]
grads = tape.gradient(class_score, conv_out)
weights = tf.reduce_mean(grads, axis=(0, 1, 2))
heatmap = tf.nn.relu(tf.reduce_sum(conv_out[0] * weights, axis=-1))
print("heatmap max:", float(tf.reduce_max(heatmap)))
