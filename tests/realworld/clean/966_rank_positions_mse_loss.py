"""Clean control 966 (expected clean).

Look-alike of case 566: the same pad handling on y_true, but the model
regresses the order positions directly with a squared error instead of
comparing argsort ranks, so the loss is differentiable in y_pred.
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
        return tf.reduce_mean(tf.square(y_true - y_pred))

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
history = model.fit(tokens, orders, batch_size=16, epochs=3, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
