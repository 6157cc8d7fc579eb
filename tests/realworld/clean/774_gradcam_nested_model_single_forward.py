"""Clean control 774 (expected clean).

Twin of case 754: Grad-CAM on the same model-in-model, but the class score is
computed from the conv output itself: the forward pass runs layer by layer
through the inner model (keeping the last conv activation) and on through the
outer head, so d(score)/d(conv output) exists.
Setting: gradients with respect to an intermediate activation (Grad-CAM saliency), nested Keras 3 models, eager tape.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.random((128, 28, 28, 1)).astype("float32")
y_train = rng.integers(0, 10, size=128)

inner = keras.Sequential([
    keras.Input((28, 28, 1)),
    layers.Conv2D(8, 3, activation="relu", name="conv_1"),
    layers.MaxPooling2D(),
    layers.Conv2D(16, 3, activation="relu", name="last_conv"),
    layers.GlobalAveragePooling2D(),
    layers.Dense(10, name="inner_logits"),
], name="inner")
inner.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
inner.fit(x_train, y_train, epochs=1, batch_size=32, verbose=0)

inner.trainable = False
outer = keras.Sequential([
    keras.Input((28, 28, 1)),
    inner,
    layers.Dense(32, activation="relu", name="outer_hidden"),
    layers.Dense(10, activation="softmax", name="outer_out"),
], name="outer")
outer.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
outer.fit(x_train, y_train, epochs=1, batch_size=32, verbose=0)
inner.trainable = True

img_array = x_train[:1]
with tf.GradientTape() as tape:
    x = tf.convert_to_tensor(img_array)
    for layer in outer.get_layer("inner").layers:
        x = layer(x)
        if layer.name == "last_conv":
            last_conv_layer_output = x
    for layer in outer.layers[1:]:
        x = layer(x)
    preds = x
    pred_index = tf.argmax(preds[0])
    class_channel = preds[:, pred_index]
grads = tape.gradient(class_channel, last_conv_layer_output)
if grads is None:
    print("None gradients for:", ["last_conv_layer_output"])
else:
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = tf.squeeze(last_conv_layer_output[0] @ pooled_grads[..., tf.newaxis])
    heatmap = tf.maximum(heatmap, 0) / (tf.math.reduce_max(heatmap) + 1e-8)
    print("heatmap", heatmap.shape)
