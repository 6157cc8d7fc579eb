"""Real-world case 566.

Source: https://github.com/tensorflow/tensorflow/issues/56396
Bug: the custom loss compares the rank order of the predictions with the
true order by applying tf.argsort twice to y_pred. argsort returns integer
indices (it is built on top_k), which carry no gradient, so fit() finds no
gradient for any weight; with loss="mse" the same model trains.
Setting: functional Keras 3 model (text encoder + dense head), compile(loss=custom) + fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras.layers import Dense, Dropout, Input

VOCAB, MAX_TOKENS, MAX_CELLS, PAD = 500, 24, 8, -1


def calculate_loss(pad_val, max_val):
    def loss(y_true, y_pred):
        pad_indices = tf.where(y_true == pad_val)
        y_true = tf.tensor_scatter_nd_update(
            y_true,
            pad_indices,
            tf.ones(tf.shape(pad_indices)[0], y_true.dtype) * max_val,
        )
        actual_orders = tf.argsort(tf.argsort(y_true))
        predicted_orders = tf.argsort(tf.argsort(y_pred))
        return tf.cast(tf.reduce_sum(tf.abs(actual_orders - predicted_orders)), tf.float32)

    return loss


ip = Input(shape=(MAX_TOKENS,), dtype="int32")
emb = keras.layers.Embedding(VOCAB, 32)(ip)
enc = keras.layers.GlobalAveragePooling1D()(emb)
out = Dense(64, activation="relu")(enc)
out = Dropout(0.2)(out)
out = Dense(units=MAX_CELLS)(out)
model = keras.Model(ip, out)
model.compile(optimizer="adam", loss=calculate_loss(PAD, MAX_CELLS))

tokens = np.random.randint(1, VOCAB, size=(128, MAX_TOKENS)).astype("int32")
orders = np.stack([np.random.permutation(MAX_CELLS) for _ in range(128)]).astype("float32")
orders[:, 6:][np.random.rand(128, 2) < 0.5] = PAD
model.fit(tokens, orders, batch_size=16, epochs=1, verbose=0)
