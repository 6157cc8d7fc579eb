"""Real-world case 1089.

Source: https://github.com/tensorflow/tensorflow/issues/61106
Bug: a U-Net with a CRF-style bilateral refinement layer on top (after
Refined UNet v3). The refinement solves a pixel-affinity linear system
(I + w * L) y = p with `tf.linalg.lu` + `tf.linalg.lu_solve`, where the
pairwise weight `w` is a trainable weight of the layer. The layer is placed
inside the model that is trained with model.fit, so the gradient for `w`
has to pass through the `Lu` op, which has no registered gradient:
fit fails with "No gradient defined for operation 'bilateral_layer/Lu'
(op type: Lu)" (LookupError) although compile and summary work.
Setting: Keras 3 functional U-Net + custom layer (tf.linalg), model.fit with a compiled loss, segmentation.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
H = W = 8
CLASSES = 3


class BilateralLayer(layers.Layer):
    def __init__(self, theta_alpha=3.0, theta_beta=0.3, **kwargs):
        super().__init__(**kwargs)
        self.theta_alpha, self.theta_beta = theta_alpha, theta_beta

    def build(self, input_shape):
        self.pairwise_weight = self.add_weight(
            shape=(), initializer=keras.initializers.Constant(1.0), name="pairwise_weight")

    def call(self, inputs):
        probs, image = inputs
        batch = tf.shape(probs)[0]
        n = H * W
        yy, xx = tf.meshgrid(tf.range(H, dtype=tf.float32), tf.range(W, dtype=tf.float32), indexing="ij")
        pos = tf.reshape(tf.stack([yy, xx], axis=-1), (1, n, 2)) / self.theta_alpha
        pos = tf.tile(pos, [batch, 1, 1])
        feats = tf.concat([pos, tf.reshape(image, (batch, n, 3)) / self.theta_beta], axis=-1)
        sq = tf.reduce_sum(feats ** 2, axis=-1)
        d2 = sq[:, :, None] + sq[:, None, :] - 2.0 * tf.matmul(feats, feats, transpose_b=True)
        affinity = tf.exp(-0.5 * tf.maximum(d2, 0.0))
        laplacian = tf.linalg.diag(tf.reduce_sum(affinity, axis=-1)) - affinity
        system = tf.eye(n, batch_shape=[batch]) + self.pairwise_weight * laplacian
        lu, perm = tf.linalg.lu(system)
        refined = tf.linalg.lu_solve(lu, perm, tf.reshape(probs, (batch, n, CLASSES)))
        return tf.reshape(refined, (batch, H, W, CLASSES))


def unet():
    image = keras.Input((H, W, 3))
    c1 = layers.Conv2D(8, 3, padding="same", activation="relu")(image)
    p1 = layers.MaxPooling2D()(c1)
    c2 = layers.Conv2D(16, 3, padding="same", activation="relu")(p1)
    u1 = layers.UpSampling2D()(c2)
    m1 = layers.Concatenate()([u1, c1])
    probs = layers.Conv2D(CLASSES, 1, activation="softmax")(m1)
    return image, probs


image, probs = unet()
refined = BilateralLayer(name="bilateral_layer")([probs, image])
model = keras.Model(image, refined)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

x = np.random.rand(16, H, W, 3).astype("float32")
y = np.random.randint(0, CLASSES, size=(16, H, W)).astype("int32")
model.fit(x, y, batch_size=8, epochs=1, verbose=0)
print("trained")
