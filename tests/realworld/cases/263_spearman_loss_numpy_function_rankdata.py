"""Real-world case 263.

Source: https://github.com/tensorflow/tensorflow/issues/35713
Bug: a Spearman-correlation loss for several targets ranks y_true and y_pred
with tf.numpy_function(rankdata, ...); numpy_function has no gradient, so
the loss is a constant for the model and fit raises "No gradients provided
for any variable".
Setting: Keras 3 Sequential regressor with several targets, custom loss
closure, model.fit (scipy's rankdata replaced by a NumPy equivalent).
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
BATCH_SIZE = 4


def rankdata(a):
    return (np.argsort(np.argsort(a)) + 1).astype(np.float32)


def custom_loss(num_targets):
    def custom_rhos(y_true, y_pred):
        rhos = []
        for ind in range(num_targets):
            a = tf.squeeze(tf.slice(y_true, [0, ind], [-1, 1]))
            b = tf.squeeze(tf.slice(y_pred, [0, ind], [-1, 1]))
            rank_a, rank_b = tf.numpy_function(rankdata, [a], Tout=tf.float32), tf.numpy_function(rankdata, [b], Tout=tf.float32)
            rho = 1 - 6 * tf.reduce_sum((rank_a - rank_b) ** 2) / (BATCH_SIZE**3 - BATCH_SIZE)
            rhos.append(rho)
        return -tf.reduce_sum(rhos)

    return custom_rhos


model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
model.compile(optimizer="adam", loss=custom_loss(3))
x = np.random.rand(16, 5).astype("float32")
y = np.random.rand(16, 3).astype("float32")
model.fit(x, y, batch_size=BATCH_SIZE, epochs=1, verbose=0)
