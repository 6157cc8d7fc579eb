"""Real-world case 223.

Source: https://github.com/cleverhans-lab/cleverhans/issues/432
Bug: a filtering layer at the input of a Keras classifier wraps a NumPy
function (np.sinh) with tf.numpy_function (formerly tf.py_func); an FGSM
attack needs the gradient of the loss with respect to the input image, but a
numpy_function has no gradient, so the gradient with respect to x is None.
Setting: custom Keras 3 layer in a Sequential model, eager GradientTape on a watched input (adversarial attack).
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)


class MyLayer(keras.layers.Layer):
    def call(self, X):
        def __function(X):
            return np.sinh(X)
        return tf.reshape(tf.numpy_function(__function, [X], tf.float32), shape=(-1, *X.shape[1:]))

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
print("gradient w.r.t. x:", grad)
