"""Clean control 771 (expected clean).

Twin of case 751: the FGSM attack computes the reconstruction inside the tape
with the model call and scores it with the TensorFlow MSE, so the gradient with
respect to the watched input exists.
Setting: gradients with respect to inputs (adversarial example), eager tape, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def mean_squared_error(y_true, y_pred):
    return keras.ops.mean(keras.ops.square(y_true - y_pred))


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

X_tf = tf.convert_to_tensor(X_test, dtype=tf.float32)
with tf.GradientTape() as tape:
    tape.watch(X_tf)
    predictions = model(X_tf)
    lossFunction = mean_squared_error(X_tf, predictions)
gradientFunction = tape.gradient(lossFunction, X_tf)
signed_grad = tf.sign(gradientFunction)
perturbed_data = X_test + 0.2 * signed_grad
X_perturbed = perturbed_data.numpy()
print("reconstruction error before/after attack:", float(lossFunction),
      float(mean_squared_error(X_perturbed, model(X_perturbed))))
