"""Real-world case 1093.

Source: https://github.com/neuronets/nobrainer/pull/169
Bug: a SimSiam pre-training step uses Keras's built-in cosine-similarity
loss between the predictor output of one view and the projection z of the
other view. That loss does not stop the gradient of its y_true argument, so
z - the target branch - is trained too: the encoder is pulled towards the
predictor's output from both sides, which is the shortcut that lets SimSiam
collapse. The review of the PR notes the only change needed is stopping the
gradient of the encoder target.
Setting: Keras 3 subclassed Model, custom train_step, keras.losses / keras.ops, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops


def negative_cosine(p, z):
    return ops.mean(keras.losses.cosine_similarity(z, p))


class SimSiam(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential(
            [layers.Dense(32, activation="relu", name="backbone"), layers.Dense(16, name="projector")],
            name="encoder")
        self.predictor = keras.Sequential(
            [layers.Dense(8, activation="relu", name="pred_hidden"), layers.Dense(16, name="pred_out")],
            name="predictor")
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x):
        return self.predictor(self.encoder(x))

    def train_step(self, data):
        view1, view2 = keras.utils.unpack_x_y_sample_weight(data)[0]
        with tf.GradientTape() as tape:
            z1 = self.encoder(view1, training=True)
            z2 = self.encoder(view2, training=True)
            p1 = self.predictor(z1, training=True)
            p2 = self.predictor(z2, training=True)
            loss = 0.5 * negative_cosine(p1, z2) + 0.5 * negative_cosine(p2, z1)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
images = rng.random((128, 20)).astype("float32")
view1 = images + 0.1 * rng.standard_normal(images.shape).astype("float32")
view2 = images + 0.1 * rng.standard_normal(images.shape).astype("float32")

model = SimSiam()
model((view1[:2]))
model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9))
model.fit((view1, view2), batch_size=32, epochs=3, verbose=2)
