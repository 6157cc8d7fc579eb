"""Real-world case 280.

Source: https://github.com/keras-team/keras/issues/9130
Bug: an (identity) Python function is wrapped with tf.py_func, today
tf.numpy_function, in a Lambda layer after a CNN backbone and a sum Lambda;
a numpy_function has no gradient, so nothing in front of it gets one:
Keras 2.1 failed with "ValueError: None values not supported", Keras 3 fit
raises "No gradients provided for any variable" (with the Lambda removed it
trains).
Setting: Keras 3 functional model (VGG16 replaced by a small CNN with a linear
head), Lambda layer with tf.numpy_function, compile(mae) + model.fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras.layers import Conv2D, Dense, Flatten, Input, Lambda
from keras.models import Model

keras.utils.set_random_seed(0)

inputs = Input((32, 32, 3))
x = Conv2D(8, 3, strides=2, activation="relu")(inputs)
x = Flatten()(x)
net_output = Dense(10)(x)  # linear head: the sum of a softmax would be constant

# (?, 10) => (?, 1)
out1 = Lambda(lambda x: tf.reduce_sum(x, axis=-1, keepdims=True), name="sums")(net_output)


# This is the (identity) py_func that causes the error for some reason.
def py_func(x):
    tensor = tf.numpy_function(lambda y: y, [x], tf.float32)
    tensor.set_shape(x.shape)
    return tensor


out2 = Lambda(py_func, output_shape=(1,), name="py_func")(out1)

facenet = Model(inputs, out2)
facenet.compile(loss=keras.losses.mean_absolute_error, optimizer=keras.optimizers.Adam(learning_rate=1e-5))
x_train = np.zeros((8, 32, 32, 3), dtype=np.float32)
y_train = np.zeros((8, 1), dtype=np.float32)
facenet.fit(x_train, y_train, batch_size=4, verbose=0)
