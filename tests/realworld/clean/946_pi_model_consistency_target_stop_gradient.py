"""Clean control 946 (expected clean).

Look-alike of case 546: the Pi-model train_step with the clean prediction
wrapped in tf.stop_gradient, so it serves as a fixed consistency target and
only the noisy prediction is pulled towards it.
Setting: semi-supervised keras.Model subclass with a custom train_step,
model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(3)
NUM_CLASSES, CONSISTENCY_WEIGHT = 10, 10.0


class PiModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.noise = layers.GaussianNoise(0.15)
        self.dense1 = layers.Dense(64, activation="relu")
        self.drop1 = layers.Dropout(0.5)
        self.dense2 = layers.Dense(64, activation="relu")
        self.drop2 = layers.Dropout(0.5)
        self.out = layers.Dense(NUM_CLASSES, activation="softmax")
        self.ce = keras.losses.SparseCategoricalCrossentropy(reduction=None)

    def call(self, x, training=False):
        x = self.noise(x, training=training)
        x = self.drop1(self.dense1(x), training=training)
        x = self.drop2(self.dense2(x), training=training)
        return self.out(x)

    def train_step(self, data):
        (x, labelled), y = data
        with tf.GradientTape() as tape:
            target = tf.stop_gradient(self(x, training=False))
            pred = self(x, training=True)
            sup = tf.reduce_sum(labelled * self.ce(y, pred)) / tf.maximum(tf.reduce_sum(labelled), 1.0)
            unsup = tf.reduce_mean(tf.square(target - pred))
            loss = sup + CONSISTENCY_WEIGHT * unsup
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "supervised": sup, "consistency": unsup}


rng = np.random.default_rng(0)
n = 512
x_all = rng.normal(size=(n, 20)).astype("float32")
y_all = (np.abs(x_all[:, :NUM_CLASSES]).argmax(1)).astype("int32")
labelled = (rng.uniform(size=n) < 0.1).astype("float32")

model = PiModel()
model.compile(optimizer=keras.optimizers.Adam(3e-3))
history = model.fit((x_all, labelled), y_all, batch_size=64, epochs=3, verbose=0)
print("supervised loss:", history.history["supervised"])
