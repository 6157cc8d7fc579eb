"""Real-world case 216.

Source: https://github.com/keras-team/keras/issues/7567
Bug: an unsupervised loss for a classifier takes the standard deviation of
the predicted class labels, obtained with K.argmax(y_pred); argmax returns
integer indices, so no gradient reaches any weight and fit() fails with
"No gradients provided for any variable".
Setting: Keras 2 (tf_keras) Sequential classifier, custom K.* loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def StdLoss(y_true, y_pred):
    label = K.cast(K.argmax(y_pred, axis=1), dtype="float32")
    return K.std(label, axis=0, keepdims=True)


model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(20,)),
    keras.layers.Dense(5, activation="softmax"),
])
model.compile(optimizer="adam", loss=StdLoss)
x_train = np.random.rand(64, 20).astype("float32")
y_dummy = np.zeros((64, 5), dtype="float32")
model.fit(x_train, y_dummy, batch_size=16, epochs=1, shuffle=True, verbose=0)
