"""Control 851 (look-alike of case 451).

Source: https://github.com/keras-team/tf-keras/issues/62 (Keras 2 selected from inside the script)
The same fit with a custom train_step, Keras 2 selected in the script; the grade is rounded only
for the metric, outside the loss: it trains.
Setting: in-script TF_USE_LEGACY_KERAS, tf_keras subclassed Model, model.fit (tf.function).
"""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np
import tensorflow as tf
from tensorflow import keras


class Grader(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            score = self(x, training=True)
            loss = tf.reduce_mean(tf.square(score - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "exact": tf.reduce_mean(tf.cast(tf.round(score) == y, tf.float32))}


model = Grader()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
x = np.random.rand(64, 5).astype("float32")
y = np.random.randint(0, 5, size=(64, 1)).astype("float32")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
