"""Real-world case 559.

Source: https://github.com/lightly-ai/lightly/issues/559
Bug: a SimSiam implementation returns the projections z0/z1 without detaching
them and the negative-cosine loss compares the prediction p of one view with
the projection z of the other view. SimSiam needs stop-gradient on z: without
it the target is a function of the encoder being trained, the loss pulls the
target branch as well and the representation can collapse. Rewritten as a
Keras 3 model with a custom train_step (the keras.io SimSiam layout).
Setting: self-supervised (SimSiam), fit + custom train_step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

PROJECT_DIM, LATENT_DIM = 32, 16


def get_encoder():
    inputs = layers.Input((16, 16, 3))
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D(name="backbone_pool")(x)
    x = layers.Dense(PROJECT_DIM, use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    outputs = layers.Dense(PROJECT_DIM, use_bias=False)(x)
    return keras.Model(inputs, outputs, name="encoder")


def get_predictor():
    model = keras.Sequential(
        [
            layers.Input((PROJECT_DIM,)),
            layers.Dense(LATENT_DIM, use_bias=False),
            layers.ReLU(),
            layers.Dense(PROJECT_DIM),
        ],
        name="predictor",
    )
    return model


def compute_loss(p, z):
    p = tf.math.l2_normalize(p, axis=1)
    z = tf.math.l2_normalize(z, axis=1)
    return -tf.reduce_mean(tf.reduce_sum((p * z), axis=1))


class SimSiam(keras.Model):
    def __init__(self, encoder, predictor):
        super().__init__()
        self.encoder = encoder
        self.predictor = predictor
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def train_step(self, data):
        ds_one, ds_two = data
        with tf.GradientTape() as tape:
            z1, z2 = self.encoder(ds_one, training=True), self.encoder(ds_two, training=True)
            p1, p2 = self.predictor(z1, training=True), self.predictor(z2, training=True)
            loss = compute_loss(p1, z2) / 2 + compute_loss(p2, z1) / 2
        learnable_params = self.encoder.trainable_variables + self.predictor.trainable_variables
        gradients = tape.gradient(loss, learnable_params)
        self.optimizer.apply_gradients(zip(gradients, learnable_params))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


rng = np.random.default_rng(0)
images = rng.random((64, 16, 16, 3)).astype("float32")


def augment(x):
    x = tf.image.random_flip_left_right(x)
    return tf.clip_by_value(x + tf.random.normal(tf.shape(x), stddev=0.1), 0.0, 1.0)


ssl_ds = tf.data.Dataset.from_tensor_slices(images).batch(16)
ssl_ds = ssl_ds.map(lambda x: (augment(x), augment(x)))

simsiam = SimSiam(get_encoder(), get_predictor())
simsiam.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.6))
history = simsiam.fit(ssl_ds, epochs=2, verbose=2)
