"""Real-world case 451.

Source: https://github.com/keras-team/tf-keras/issues/62 (Keras 2 selected from inside the script)
Bug: a script keeps its Keras 2 code running on TF 2.16+ by setting `TF_USE_LEGACY_KERAS` itself
before `import tensorflow`, and trains an ordinal regressor with `model.fit` and a custom
`train_step`. The step rounds the prediction to the nearest grade before the loss, so every
variable gets a None gradient inside the traced step.
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
            grade = tf.round(self(x, training=True))
            loss = tf.reduce_mean(tf.square(grade - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = Grader()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
x = np.random.rand(64, 5).astype("float32")
y = np.random.randint(0, 5, size=(64, 1)).astype("float32")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
