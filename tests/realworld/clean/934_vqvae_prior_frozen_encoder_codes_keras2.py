"""Real-world control 934 (fixed twin of case 534).

Source: https://github.com/tensorflow/tensorflow/issues/47469
Fix: the prior is trained on codes from the already-trained VQ-VAE, so the
encoder and the quantizer are frozen (trainable = False) before compiling. The
argmin still picks the codes in the forward pass, but no trainable weight sits
behind it any more; only the PixelCNN-style prior is trained, and all of its
weights get gradients.
Setting: Keras 2 (tf_keras), nested Sequential encoder + custom quantizer
layer + functional prior, add_loss on the code indices, fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

NUM_CODES = 8
CODE_DIM = 4


class VectorQuantizer(layers.Layer):
    def __init__(self, num_codes, code_dim, **kwargs):
        super().__init__(**kwargs)
        self.num_codes = num_codes
        self.code_dim = code_dim

    def build(self, input_shape):
        self.codebook = self.add_weight(
            name="codebook", shape=(self.num_codes, self.code_dim),
            initializer="random_uniform", trainable=True)

    def call(self, latents):
        flat = tf.reshape(latents, [-1, self.code_dim])
        distances = (tf.reduce_sum(flat ** 2, axis=1, keepdims=True)
                     - 2.0 * tf.matmul(flat, self.codebook, transpose_b=True)
                     + tf.reduce_sum(self.codebook ** 2, axis=1))
        indices = tf.argmin(distances, axis=1)
        return tf.reshape(indices, tf.shape(latents)[:-1])


def build_encoder():
    return keras.Sequential([
        layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="enc_conv1"),
        layers.Conv2D(CODE_DIM, 3, strides=2, padding="same", name="enc_conv2"),
    ], name="vq_encoder")


def build_prior():
    codes_onehot = keras.Input((4, 4, NUM_CODES))
    x = layers.Conv2D(16, 3, padding="same", activation="relu", name="prior_conv")(codes_onehot)
    logits = layers.Conv2D(NUM_CODES, 1, name="prior_logits")(x)
    return keras.Model(codes_onehot, logits, name="pixel_prior")


tf.random.set_seed(0)
np.random.seed(0)

encoder = build_encoder()
quantizer = VectorQuantizer(NUM_CODES, CODE_DIM, name="vq")
prior = build_prior()
encoder.trainable = False
quantizer.trainable = False

images = keras.Input((16, 16, 1))
codes = quantizer(encoder(images))
onehot = layers.Lambda(lambda c: tf.one_hot(c, NUM_CODES), name="to_onehot")(codes)
logits = prior(onehot)
prior_model = keras.Model(images, logits, name="prior_trainer")
prior_model.add_loss(tf.reduce_mean(
    keras.losses.sparse_categorical_crossentropy(codes, logits, from_logits=True)))
prior_model.compile(optimizer=keras.optimizers.Adam(1e-3))

x = np.random.uniform(0.0, 1.0, size=(64, 16, 16, 1)).astype("float32")
prior_model.fit(x, batch_size=16, epochs=1, verbose=0)
