"""Real-world control 1064 (twin of case 1044).

Source: https://github.com/keras-team/keras/issues/5881
Fixed: the classifier ends in a linear Dense ("logits") followed by a
separate softmax Activation, and Grad-CAM differentiates the class *logit*
(pre-softmax score), which does not saturate: the gradient map is non-zero.
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
    layers.Dense(24, name="logits"),
    layers.Activation("softmax"),
])
# stand-in for the fine-tuned, over-confident weights
w, b = model.layers[-2].get_weights()
model.layers[-2].set_weights([w * 400.0, b])

inp = keras.Input(shape=(img_width, img_height, 3))
conv_outputs = base_model(inp)
x = conv_outputs
for layer in model.layers[1:-1]:
    x = layer(x)
grad_model = keras.Model(inp, [conv_outputs, x])

image = np.random.default_rng(0).uniform(0, 255, size=(1, img_width, img_height, 3)).astype("float32")
with tf.GradientTape() as tape:
    conv_out, logits = grad_model(image)
    class_idx = int(tf.argmax(logits[0]))
    class_score = logits[:, class_idx]
grads = tape.gradient(class_score, conv_out)
weights = tf.reduce_mean(grads, axis=(0, 1, 2))
heatmap = tf.nn.relu(tf.reduce_sum(conv_out[0] * weights, axis=-1))
print("heatmap max:", float(tf.reduce_max(heatmap)))
