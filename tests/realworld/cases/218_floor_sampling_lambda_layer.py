"""Real-world case 218.

Source: https://github.com/keras-team/keras/issues/5521
Bug: to emit a multi-hot "which piano keys are pressed" vector, the output
layer is a Lambda that samples 0/1 values with tf.floor(x + uniform noise);
tf.floor has no gradient, so nothing before the Lambda layer can be trained
and fit() fails with "No gradients provided for any variable".
Setting: Keras 3 Sequential model with a Lambda output layer, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)


def FloorSampling(x):
    """Returns a tensor of 0s and 1s: key i is pressed with probability x[i]."""
    return tf.floor(x + tf.random.uniform(tf.shape(x), 0, 1))


model = keras.Sequential([
    keras.Input((32,)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(88, activation="sigmoid"),
    keras.layers.Lambda(FloorSampling, output_shape=lambda s: s),
])
model.compile(optimizer="adam", loss="binary_crossentropy")
x_train = np.random.rand(64, 32).astype("float32")
y_train = (np.random.rand(64, 88) < 0.05).astype("float32")
model.fit(x_train, y_train, batch_size=16, epochs=1, verbose=0)
