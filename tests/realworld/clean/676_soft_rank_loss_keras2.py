"""Clean control 676 (look-alike of case 276).

Source: https://github.com/keras-team/keras/issues/16663
The same ranking loss, but the predicted ranks are soft ranks (row sums of
a pairwise sigmoid of score differences), which are differentiable; argsort
is kept only for the target ranks, so every model variable is trained.
Setting: Keras 2 (tf_keras) functional model on top of an encoder, custom
loss closure, compile + model.fit.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras.layers import Dense, Dropout, Input
from tf_keras.models import Model

tf.random.set_seed(0)
N_ITEMS, PAD = 8, -1.0


def calculate_loss(pad_val, max_val):
    def loss(y_true, y_pred):
        pad_indices = tf.where(y_true == pad_val)
        y_true = tf.tensor_scatter_nd_update(
            y_true,
            pad_indices,
            tf.ones(tf.shape(pad_indices)[0], y_true.dtype) * max_val,
        )
        actual_orders = tf.cast(tf.argsort(tf.argsort(y_true)), tf.float32)
        predicted_orders = tf.reduce_sum(tf.sigmoid((y_pred[:, :, None] - y_pred[:, None, :]) / 0.1), axis=-1) - 0.5
        return tf.reduce_sum(tf.abs(actual_orders - predicted_orders))

    return loss


def create_model():
    inputs = Input(shape=(32,), name="features")
    x = Dense(64, activation="relu")(inputs)
    x = Dropout(0.1)(x)
    outputs = Dense(N_ITEMS)(x)
    return Model(inputs, outputs)


model = create_model()
model.compile(optimizer="adam", loss=calculate_loss(PAD, float(N_ITEMS)))

x = np.random.rand(64, 32).astype("float32")
y = np.stack([np.random.permutation(N_ITEMS) for _ in range(64)]).astype("float32")
y[:, -2:] = PAD  # padded positions
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
