"""Real-world case 751.

Source: https://github.com/afraarslan/adversarial-attacks/issues/1
Bug: an FGSM attack on a trained autoencoder watches the input tensor X_tf and
scores it with a hand-written `mean_squared_error` against predictions from
`model.predict`. The helper squares the difference with `np.square`, which
turns the tensor into a NumPy array, so the loss is a constant to the tape: the
gradient with respect to X_tf is None and `tf.sign(None)` fails.
Setting: gradients with respect to inputs (adversarial example), eager tape, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def mean_squared_error(y_true, y_pred):
    return tf.reduce_mean(np.square(y_true - y_pred), axis=-1)


rng = np.random.default_rng(0)
X_train = rng.normal(size=(256, 20)).astype("float32")
X_test = rng.normal(size=(32, 20)).astype("float32")

model = keras.Sequential([
    keras.Input((20,)),
    layers.Dense(8, activation="relu"),
    layers.Dense(20),
])
model.compile(optimizer="adam", loss="mse")
model.fit(X_train, X_train, epochs=2, batch_size=64, verbose=0)

predictions = model.predict(X_test, verbose=0)
X_tf = tf.convert_to_tensor(X_test, dtype=tf.float32)
with tf.GradientTape() as tape:
    tape.watch(X_tf)
    lossFunction = mean_squared_error(X_tf, predictions)
gradientFunction = tape.gradient(lossFunction, X_tf)
if gradientFunction is None:
    print("None gradients for:", ["X_tf"])
else:
    signed_grad = tf.sign(gradientFunction)
    perturbed_data = X_test + 0.2 * signed_grad
    X_perturbed = perturbed_data.numpy()
    print("reconstruction error on perturbed data:",
          mean_squared_error(X_perturbed, model.predict(X_perturbed, verbose=0)))
