"""Real-world case 406.

Source: https://github.com/tensorflow/tensorflow/issues/36596
Bug: gradient of a custom loss w.r.t. the input image is None. The reporter's
own diagnosis: "Converting the loss value and the predictions from the model to
numpy array ... I was using a custom loss function which converted the
predicted values to numpy arrays for computations."
Setting: Keras 3 CNN classifier, eager GradientTape watching the input image
(adversarial / saliency use), custom margin loss written with NumPy.
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
    p = preds.numpy()
    true_p = np.take_along_axis(p, labels[:, None], axis=1)[:, 0]
    return tf.constant(np.mean(1.0 - true_p), dtype=tf.float32)


image = tf.convert_to_tensor(np.random.rand(2, 12, 12, 3).astype("float32"))
labels = np.array([1, 3])
with tf.GradientTape() as tape:
    tape.watch(image)
    preds = model(image)
    loss = margin_loss(labels, preds)
grad = tape.gradient(loss, image)
print("loss", float(loss), "grad:", grad)
