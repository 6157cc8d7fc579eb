"""Real-world case 228.

Source: https://github.com/keras-team/keras/issues/4175
Bug: a custom loss for a binary classifier uses K.round(y_pred) to count
misclassified samples; K.round has no gradient, so fit() fails (then "None
values not supported", today "No gradients provided for any variable").
Removing K.round makes it train.
Setting: Keras 2 (tf_keras) Sequential classifier, custom K.* loss, model.fit() with sample weights.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def rounded_error_loss(y_true, y_pred):
    return K.mean(K.abs(y_true - K.round(y_pred)), axis=-1)


model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(10,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="sgd", loss=rounded_error_loss)
x_train = np.random.rand(64, 10).astype("float32")
y_train = np.random.randint(0, 2, size=(64, 1)).astype("float32")
train_weight = np.where(y_train[:, 0] == 1, 3.0, 1.0).astype("float32")
model.fit(x_train, y_train, epochs=1, batch_size=16, shuffle=True, verbose=0, sample_weight=train_weight)
