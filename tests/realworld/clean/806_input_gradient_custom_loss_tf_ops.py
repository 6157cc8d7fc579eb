"""Clean control 806 (look-alike of case 406).

Source: https://github.com/tensorflow/tensorflow/issues/36596
The same margin loss written with TensorFlow ops (tf.gather with batch_dims),
so the gradient reaches the watched input image.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((12, 12, 3)),
    keras.layers.Conv2D(4, 3, activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(5, activation="softmax"),
])


def margin_loss(labels, preds):
    true_p = tf.gather(preds, labels, batch_dims=1)
    return tf.reduce_mean(1.0 - true_p)


image = tf.convert_to_tensor(np.random.rand(2, 12, 12, 3).astype("float32"))
labels = np.array([1, 3])
with tf.GradientTape() as tape:
    tape.watch(image)
    preds = model(image)
    loss = margin_loss(labels, preds)
grad = tape.gradient(loss, image)
print("loss", float(loss), "grad:", grad.shape)
