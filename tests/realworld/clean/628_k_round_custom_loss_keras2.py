"""Clean control 628 (expected clean).

Binary classifier trained on a soft error rate, mean(|y_true - y_pred|), with
sample weights; the rounded (hard) error rate that uses K.round is only a
metric, so the loss is differentiable and every weight gets a gradient.
Setting: Keras 2 (tf_keras) Sequential classifier, custom K.* loss and metric, model.fit() with sample weights.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def soft_error_loss(y_true, y_pred):
    return K.mean(K.abs(y_true - y_pred), axis=-1)


def rounded_error(y_true, y_pred):
    return K.mean(K.abs(y_true - K.round(y_pred)), axis=-1)


model = keras.Sequential([
    keras.layers.Dense(32, activation="relu", input_shape=(10,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="sgd", loss=soft_error_loss, metrics=[rounded_error])
x_train = np.random.rand(64, 10).astype("float32")
y_train = np.random.randint(0, 2, size=(64, 1)).astype("float32")
train_weight = np.where(y_train[:, 0] == 1, 3.0, 1.0).astype("float32")
model.fit(x_train, y_train, epochs=1, batch_size=16, shuffle=True, verbose=0, sample_weight=train_weight)
print("trained without gradient warnings")
