"""Real-world case 333.

Source: https://github.com/PatrickHua/SimSiam/issues/39
Bug: "There should be a stop gradient in the simsiam model ... The 'stop_gradient' part of
the network is absent from your implementation. This model is effectively training both the
path." SimSiam's negative cosine similarity D(p1, z2) must treat the other view's projection
z2 as a constant; without the stop-gradient the representation collapses (the paper: "a
stop-gradient operation plays an essential role in preventing collapsing").
Setting: Keras 3 subclassed SimSiam (encoder+projector, predictor head), custom train_step,
model.fit on two augmented views.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


def negative_cosine(p, z):
    p = tf.math.l2_normalize(p, axis=1)
    z = tf.math.l2_normalize(z, axis=1)
    return -tf.reduce_mean(tf.reduce_sum(p * z, axis=1))


class SimSiam(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(32)])
        self.predictor = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(32)])

    def train_step(self, data):
        view1, view2 = data
        with tf.GradientTape() as tape:
            z1, z2 = self.encoder(view1), self.encoder(view2)
            p1, p2 = self.predictor(z1), self.predictor(z2)
            loss = 0.5 * negative_cosine(p1, z2) + 0.5 * negative_cosine(p2, z1)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


images = np.random.randn(128, 20).astype("float32")
view1 = images + 0.1 * np.random.randn(128, 20).astype("float32")
view2 = images + 0.1 * np.random.randn(128, 20).astype("float32")
model = SimSiam()
model.compile(optimizer="sgd")
model.fit(tf.data.Dataset.from_tensor_slices((view1, view2)).batch(32), epochs=1, verbose=0)
