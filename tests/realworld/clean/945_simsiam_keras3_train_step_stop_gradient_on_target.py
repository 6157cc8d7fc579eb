"""Clean control 945 (expected clean).

Look-alike of case 545: SimSiam with the stop-gradient on the projection z
inside the negative-cosine loss, as in the paper, so only the online branch
(encoder + predictor through p) is trained by each term.
Setting: self-supervised SimSiam as a keras.Model subclass with a custom
train_step, model.fit on a dataset of two augmented views (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(1)
PROJECT_DIM, LATENT_DIM = 64, 16


def get_encoder():
    inputs = keras.Input((32, 32, 3))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(16, 3, strides=2, activation="relu")(x)
    x = layers.Conv2D(32, 3, strides=2, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(PROJECT_DIM, use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    outputs = layers.Dense(PROJECT_DIM)(x)
    return keras.Model(inputs, outputs, name="encoder")


def get_predictor():
    inputs = keras.Input((PROJECT_DIM,))
    x = layers.Dense(LATENT_DIM, activation="relu")(inputs)
    outputs = layers.Dense(PROJECT_DIM)(x)
    return keras.Model(inputs, outputs, name="predictor")


def compute_loss(p, z):
    p = tf.math.l2_normalize(p, axis=1)
    z = tf.math.l2_normalize(tf.stop_gradient(z), axis=1)
    return -tf.reduce_mean(tf.reduce_sum(p * z, axis=1))


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
            p1, p2 = self.predictor(z1), self.predictor(z2)
            loss = compute_loss(p1, z2) / 2 + compute_loss(p2, z1) / 2
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def augment(image):
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, 20.0)
    image = image + tf.random.normal(tf.shape(image), stddev=8.0)
    return tf.clip_by_value(image, 0.0, 255.0)


images = np.random.default_rng(0).uniform(0, 255, (128, 32, 32, 3)).astype("float32")
ssl_ds = tf.data.Dataset.from_tensor_slices(images).batch(32)
ssl_ds = ssl_ds.map(lambda x: (augment(x), augment(x)))

simsiam = SimSiam(get_encoder(), get_predictor())
simsiam.compile(optimizer=keras.optimizers.SGD(0.03, momentum=0.9))
history = simsiam.fit(ssl_ds, epochs=2, verbose=0)
print("loss:", history.history["loss"])
