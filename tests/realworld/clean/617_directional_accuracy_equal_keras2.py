"""Clean control 617 (expected clean).

Directional agreement trained through a soft surrogate: the product of tanh of
consecutive differences of targets and predictions replaces the K.equal of
their signs, so the GRU and the head get gradients.
Setting: Keras 2 (tf_keras) GRU regressor, custom K.* loss, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K

tf.random.set_seed(0)
np.random.seed(0)


def soft_mda_loss(y_true, y_pred):
    agreement = K.tanh(5.0 * (y_true[1:] - y_true[:-1])) * K.tanh(5.0 * (y_pred[1:] - y_pred[:-1]))
    return 1.0 - K.mean(agreement)


model = keras.Sequential([
    keras.layers.GRU(8, input_shape=(10, 3)),
    keras.layers.Dense(1),
])
model.compile(optimizer="rmsprop", loss=soft_mda_loss)
x_train = np.random.rand(64, 10, 3).astype("float32")
y_train = np.cumsum(np.random.randn(64, 1), axis=0).astype("float32")
model.fit(x_train, y_train, batch_size=16, epochs=1, shuffle=False, verbose=0)
print("trained without gradient warnings")
