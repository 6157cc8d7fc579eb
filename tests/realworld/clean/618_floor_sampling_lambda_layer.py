"""Clean control 618 (expected clean).

The multi-hot sampling Lambda layer still uses tf.floor(x + uniform noise) in
the forward pass, but wraps it in a straight-through estimator
(x + tf.stop_gradient(sample - x)), so gradients reach the Dense layers.
Setting: Keras 3 Sequential model with a Lambda output layer, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)


def FloorSampling(x):
    """0/1 samples in the forward pass, identity gradient in the backward pass."""
    sample = tf.floor(x + tf.random.uniform(tf.shape(x), 0, 1))
    return x + tf.stop_gradient(sample - x)


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
print("trained without gradient warnings")
