"""Clean control 616 (expected clean).

The "spread of predicted labels" loss uses the softmax-weighted expected class
index instead of K.argmax, so the standard deviation is differentiable and
every weight gets a gradient.
Setting: Keras 2 (tf_keras) Sequential classifier, custom K.* loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def StdLoss(y_true, y_pred):
    classes = K.arange(0, K.int_shape(y_pred)[1], dtype="float32")
    label = K.sum(y_pred * classes, axis=1)
    return K.std(label, axis=0, keepdims=True)


model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(20,)),
    keras.layers.Dense(5, activation="softmax"),
])
model.compile(optimizer="adam", loss=StdLoss)
x_train = np.random.rand(64, 20).astype("float32")
y_dummy = np.zeros((64, 5), dtype="float32")
model.fit(x_train, y_dummy, batch_size=16, epochs=1, shuffle=True, verbose=0)
print("trained without gradient warnings")
