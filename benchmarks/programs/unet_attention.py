"""A diffusion U-Net with attention blocks (Keras 3, ``fit`` with a custom ``train_step``),
optionally with one cut inside the attention block at one depth: the attention weights
are the one-hot of an ``argmax`` (integer indices), so the query and key projections of
that block get no gradient.

    python unet_attention.py [--size small|large] [--cut DEPTH] [--cut-kind onehot|cast] [--eager]

``--cut -1`` (the default) is the clean model. Synthetic data, one epoch of two steps.
"""

import argparse
import math

import keras
import numpy as np
import tensorflow as tf
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--size", default="small", choices=["small", "large"])
parser.add_argument("--cut", type=int, default=-1)
parser.add_argument("--cut-kind", default="onehot", choices=["onehot", "cast"])
parser.add_argument("--eager", action="store_true")
args = parser.parse_args()

SIZES = {  # image side, channels per level, attention from this level on, batch
    "small": (16, (16, 32, 32), 1, 4),
    "large": (32, (32, 64, 128, 128), 1, 8),
}
IMAGE, WIDTHS, ATTENTION_FROM, BATCH = SIZES[args.size]


class AttentionBlock(layers.Layer):
    """Self-attention over the pixels, hand-written; ``cut`` replaces the softmax weights."""

    def __init__(self, units, cut=False, **kwargs):
        super().__init__(**kwargs)
        self.cut = cut
        self.norm = layers.GroupNormalization(groups=8)
        self.query = layers.Dense(units)
        self.key = layers.Dense(units)
        self.value = layers.Dense(units)
        self.proj = layers.Dense(units)

    def call(self, x):
        shape = tf.shape(x)
        units = x.shape[-1]
        h = self.norm(x)
        flat = tf.reshape(h, [shape[0], shape[1] * shape[2], units])
        q, k, v = self.query(flat), self.key(flat), self.value(flat)
        scores = tf.einsum("bic,bjc->bij", q, k) / math.sqrt(units)
        if self.cut and args.cut_kind == "cast":
            weights = tf.cast(tf.argmax(scores, -1), tf.float32)[..., None] * tf.ones_like(scores) / units**3
        elif self.cut:
            weights = tf.one_hot(tf.argmax(scores, -1), tf.shape(scores)[-1])
        else:
            weights = tf.nn.softmax(scores)
        out = self.proj(tf.einsum("bij,bjc->bic", weights, v))
        return x + tf.reshape(out, shape)


def time_embedding(t, dim):
    half = dim // 2
    freqs = tf.exp(-math.log(10000.0) * tf.range(half, dtype=tf.float32) / half)
    angles = tf.cast(t, tf.float32)[:, None] * freqs[None, :]
    return tf.concat([tf.sin(angles), tf.cos(angles)], axis=-1)


def res_block(x, emb, width):
    skip = x if x.shape[-1] == width else layers.Conv2D(width, 1)(x)
    h = layers.Activation("swish")(layers.GroupNormalization(groups=8)(x))
    h = layers.Conv2D(width, 3, padding="same")(h)
    h = h + layers.Dense(width)(emb)[:, None, None, :]
    h = layers.Activation("swish")(layers.GroupNormalization(groups=8)(h))
    h = layers.Conv2D(width, 3, padding="same")(h)
    return skip + h


def build_unet():
    image = keras.Input((IMAGE, IMAGE, 3))
    t = keras.Input((), dtype="int32")
    emb = layers.Lambda(lambda s: time_embedding(s, 64))(t)
    emb = layers.Dense(128, activation="swish")(emb)
    x = layers.Conv2D(WIDTHS[0], 3, padding="same")(image)
    depth, skips = 0, []
    for level, width in enumerate(WIDTHS):
        x = res_block(x, emb, width)
        if level >= ATTENTION_FROM:
            x = AttentionBlock(width, cut=depth == args.cut)(x)
            depth += 1
        skips.append(x)
        if level < len(WIDTHS) - 1:
            x = layers.Conv2D(width, 3, strides=2, padding="same")(x)
    x = res_block(x, emb, WIDTHS[-1])
    x = AttentionBlock(WIDTHS[-1], cut=depth == args.cut)(x)
    depth += 1
    x = res_block(x, emb, WIDTHS[-1])
    for level in reversed(range(len(WIDTHS))):
        width = WIDTHS[level]
        x = layers.Concatenate()([x, skips[level]])
        x = res_block(x, emb, width)
        if level >= ATTENTION_FROM:
            x = AttentionBlock(width, cut=depth == args.cut)(x)
            depth += 1
        if level > 0:
            x = layers.UpSampling2D()(x)
    x = layers.Activation("swish")(layers.GroupNormalization(groups=8)(x))
    return keras.Model([image, t], layers.Conv2D(3, 3, padding="same")(x))


class Diffusion(keras.Model):
    def __init__(self, network, steps=100):
        super().__init__()
        self.network = network
        self.steps = steps
        self.alpha_bar = tf.constant(np.cumprod(1 - np.linspace(1e-4, 0.02, steps)), tf.float32)

    def train_step(self, images):
        batch = tf.shape(images)[0]
        t = tf.random.uniform([batch], 0, self.steps, dtype=tf.int32)
        noise = tf.random.normal(tf.shape(images))
        a = tf.gather(self.alpha_bar, t)[:, None, None, None]
        noisy = tf.sqrt(a) * images + tf.sqrt(1 - a) * noise
        with tf.GradientTape() as tape:
            predicted = self.network([noisy, t], training=True)
            loss = tf.reduce_mean(tf.square(noise - predicted))
        grads = tape.gradient(loss, self.network.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.network.trainable_variables, strict=True))
        return {"loss": loss}


images = np.random.default_rng(0).normal(size=(BATCH * 2, IMAGE, IMAGE, 3)).astype("float32")
model = Diffusion(build_unet())
model.compile(optimizer=keras.optimizers.Adam(1e-4), run_eagerly=args.eager)
model.fit(images, batch_size=BATCH, epochs=1, verbose=0)
