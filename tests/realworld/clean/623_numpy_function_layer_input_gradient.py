"""Clean control 623 (expected clean).

The input-filtering layer wraps its filter with tf.py_function and writes the
filter with TensorFlow ops (tf.math.sinh) instead of NumPy, so the gradient of
the loss with respect to the watched input exists and the FGSM step can be
taken.
Setting: custom Keras 3 layer in a Sequential model, eager GradientTape on a watched input (adversarial attack).
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)


class MyLayer(keras.layers.Layer):
    def call(self, X):
        def __function(X):
            return tf.math.sinh(X)
        return tf.reshape(tf.py_function(__function, [X], tf.float32), shape=(-1, *X.shape[1:]))

    def compute_output_shape(self, input_shape):
        return input_shape


kerasmodel = keras.Sequential([
    keras.Input((4,)),
    MyLayer(),
    keras.layers.Activation("softmax"),
])

x = tf.constant(np.random.rand(8, 4).astype("float32"))
y = tf.one_hot(np.random.randint(0, 4, size=8), 4)
with tf.GradientTape() as tape:
    tape.watch(x)
    preds = kerasmodel(x)
    loss = keras.losses.categorical_crossentropy(y, preds)
grad = tape.gradient(loss, x)
assert grad is not None
adv_x = x + 0.1 * tf.sign(grad)
print("adversarial batch:", adv_x.shape)
