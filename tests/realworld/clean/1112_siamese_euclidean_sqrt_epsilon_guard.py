"""Real-world control 1112 (twin of case 1092).

Source: https://github.com/keras-team/keras/issues/9269
Fixed: euclidean_distance keeps the example's guard,
K.sqrt(K.maximum(sum_square, K.epsilon())), so identical pairs (the blank
samples) get a finite distance gradient and the encoder trains.
Setting: tf_keras (Keras 2) subclassed Model with a custom train_step, model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K


def euclidean_distance(vects):
    x, y = vects
    sum_square = K.sum(K.square(x - y), axis=1, keepdims=True)
    return K.sqrt(K.maximum(sum_square, K.epsilon()))


def contrastive_loss(y_true, y_pred, margin=1.0):
    square_pred = K.square(y_pred)
    margin_square = K.square(K.maximum(margin - y_pred, 0.0))
    return K.mean(y_true * square_pred + (1.0 - y_true) * margin_square)


class SiameseNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu", name="embed_hidden")
        self.embed = keras.layers.Dense(8, use_bias=False, name="embed_out")

    def encode(self, x):
        return self.embed(self.hidden(x))

    def call(self, inputs):
        left, right = inputs
        return euclidean_distance([self.encode(left), self.encode(right)])

    def train_step(self, data):
        (left, right), y = data
        with tf.GradientTape() as tape:
            distance = self((left, right), training=True)
            loss = contrastive_loss(y, distance)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.random((64, 20)).astype("float32")
labels = rng.integers(0, 4, size=64)
x[::4] = 0.0                                    # blank samples, found in every class
left, right, same = [], [], []
for i in range(64):
    pos = rng.choice(np.flatnonzero((labels == labels[i]) & (np.arange(64) != i)))
    neg = rng.choice(np.flatnonzero(labels != labels[i]))
    left += [x[i], x[i]]
    right += [x[pos], x[neg]]
    same += [1.0, 0.0]
left, right = np.stack(left), np.stack(right)
same = np.array(same, dtype="float32")[:, None]
print("identical negative pairs:", int(((left == right).all(axis=1) & (same[:, 0] == 0)).sum()))

model = SiameseNet()
model.compile(optimizer=keras.optimizers.RMSprop(1e-3))
model.fit((left, right), same, batch_size=32, epochs=2, shuffle=False, verbose=2)
