"""Real-world case 217.

Source: https://github.com/rstudio/keras3/issues/193
Bug: a "mean directional accuracy" loss for a GRU forecaster compares the
sign of consecutive differences of targets and predictions with K.equal and
averages the cast booleans; the comparison has no gradient, so fit() fails
with "No gradients provided for any variable".
Setting: Keras 2 (tf_keras) GRU regressor, custom K.* loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def mda(y_true, y_pred):
    direction = K.equal(K.sign(y_true[1:] - y_true[:-1]), K.sign(y_pred[1:] - y_pred[:-1]))
    return K.mean(K.cast(direction, "float32"))


model = keras.Sequential([
    keras.layers.GRU(8, input_shape=(10, 3)),
    keras.layers.Dense(1),
])
model.compile(optimizer="rmsprop", loss=mda)
x_train = np.random.rand(64, 10, 3).astype("float32")
y_train = np.cumsum(np.random.randn(64, 1), axis=0).astype("float32")
model.fit(x_train, y_train, batch_size=16, epochs=1, shuffle=False, verbose=0)
