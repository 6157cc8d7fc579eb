"""Clean control 663 (look-alike of case 263).

Source: https://github.com/tensorflow/tensorflow/issues/35713
The same multi-target correlation loss written as a Pearson correlation
with TF ops (the usual differentiable stand-in for Spearman), so every
variable gets a gradient.
Setting: Keras 3 Sequential regressor with several targets, custom loss
closure, model.fit.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
BATCH_SIZE = 4


def custom_loss(num_targets):
    def custom_rhos(y_true, y_pred):
        rhos = []
        for ind in range(num_targets):
            a = tf.squeeze(tf.slice(y_true, [0, ind], [-1, 1]))
            b = tf.squeeze(tf.slice(y_pred, [0, ind], [-1, 1]))
            a, b = a - tf.reduce_mean(a), b - tf.reduce_mean(b)
            rho = tf.reduce_sum(a * b) / (tf.norm(a) * tf.norm(b) + 1e-6)
            rhos.append(rho)
        return -tf.reduce_sum(rhos)

    return custom_rhos


model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
model.compile(optimizer="adam", loss=custom_loss(3))
x = np.random.rand(16, 5).astype("float32")
y = np.random.rand(16, 3).astype("float32")
model.fit(x, y, batch_size=BATCH_SIZE, epochs=1, verbose=0)
