"""Real-world case 550.

Source: https://github.com/Justin-Tan/generative-compression/issues/51
Bug: the soft-to-hard quantizer of a learned image-compression autoencoder
builds its straight-through estimate as
w_bar = tf.round(tf.stop_gradient(w_hard - w_soft) + w_soft). The outer
tf.round has no gradient, so the straight-through trick is cut: the encoder
and the quantization centers receive no gradient ("the encoder parameters
not being updated throughout the training process"); only the decoder
trains, and Keras warns that gradients do not exist for those variables.
Setting: keras.Model subclass with a custom train_step and a custom
quantizer layer, model.fit (Keras 3).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
NUM_CENTERS, CHANNELS = 5, 8


class SoftToHardQuantizer(layers.Layer):
    def __init__(self, num_centers, sigma=1.0, **kwargs):
        super().__init__(**kwargs)
        self.num_centers, self.sigma = num_centers, sigma

    def build(self, input_shape):
        self.centers = self.add_weight(
            name="centers", shape=(self.num_centers,),
            initializer=keras.initializers.RandomUniform(-2.0, 2.0))

    def call(self, w):
        dist = tf.square(w[..., None] - self.centers)
        phi_soft = tf.nn.softmax(-self.sigma * dist, axis=-1)
        w_soft = tf.reduce_sum(phi_soft * self.centers, axis=-1)
        symbols_hard = tf.argmin(dist, axis=-1)
        w_hard = tf.gather(self.centers, symbols_hard)
        w_bar = tf.round(tf.stop_gradient(w_hard - w_soft) + w_soft)
        return w_bar


class Compressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([
            layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(CHANNELS, 3, strides=2, padding="same"),
        ], name="encoder")
        self.quantizer = SoftToHardQuantizer(NUM_CENTERS, name="quantizer")
        self.decoder = keras.Sequential([
            layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2DTranspose(3, 3, strides=2, padding="same", activation="sigmoid"),
        ], name="decoder")

    def call(self, x):
        return self.decoder(self.quantizer(self.encoder(x)))

    def train_step(self, data):
        x = data
        with tf.GradientTape() as tape:
            reconstruction = self(x, training=True)
            distortion = tf.reduce_mean(tf.square(x - reconstruction))
        grads = tape.gradient(distortion, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"distortion": distortion}


images = np.random.default_rng(0).uniform(size=(64, 16, 16, 3)).astype("float32")
model = Compressor()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
history = model.fit(images, batch_size=16, epochs=4, verbose=0)
print("distortion:", history.history["distortion"])
