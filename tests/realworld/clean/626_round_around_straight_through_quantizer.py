"""Clean control 626 (expected clean).

Learned-compression quantizer with a correct straight-through estimator:
w_bar = stop_gradient(w_hard - w_soft) + w_soft takes the hard (argmin)
values in the forward pass and the soft-assignment gradient in the backward
pass, so both the encoder and the decoder train.
Setting: Keras 3 functional encoder/decoder, custom training step in @tf.function.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
C = 4


def quantizer(w, L=5, temperature=1):
    centers = tf.cast(tf.range(-2, 3), tf.float32)
    w_stack = tf.stack([w for _ in range(L)], axis=-1)
    w_hard = tf.cast(tf.argmin(tf.abs(w_stack - centers), axis=-1), tf.float32) + tf.reduce_min(centers)
    smx = tf.nn.softmax(-1.0 / temperature * tf.abs(w_stack - centers), axis=-1)
    w_soft = tf.einsum("ijklm,m->ijkl", smx, centers)
    w_bar = tf.stop_gradient(w_hard - w_soft) + w_soft
    return w_bar


encoder = keras.Sequential([
    keras.Input((16, 16, 3)),
    layers.Conv2D(8, 3, strides=2, padding="same", activation="relu"),
    layers.Conv2D(C, 3, padding="same"),
], name="encoder")
decoder = keras.Sequential([
    keras.Input((8, 8, C)),
    layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu"),
    layers.Conv2D(3, 3, padding="same"),
], name="decoder")
optimizer = keras.optimizers.Adam(1e-3)
variables = encoder.trainable_variables + decoder.trainable_variables


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        w_bar = quantizer(encoder(x, training=True))
        x_hat = decoder(w_bar, training=True)
        distortion = tf.reduce_mean(tf.square(x - x_hat))
    grads = tape.gradient(distortion, variables)
    assert all(g is not None for g in grads)
    optimizer.apply_gradients(zip(grads, variables))
    return distortion


images = np.random.rand(8, 16, 16, 3).astype("float32") * 2 - 1
print("distortion:", float(train_step(images)))
