"""Real-world control 1116 (twin of case 1096).

Source: https://github.com/kevinzakka/spatial-transformer-network/issues/19
Fixed: the transformer samples bilinearly, as in the repository: the
four neighbouring pixels are gathered with integer indices, but they are
mixed with weights computed from the fractional source coordinates, so
the loss is differentiable in theta and the localisation network trains.
Setting: tf_keras (Keras 2) custom Layer + Model, custom training loop in tf.function, tf.gather_nd.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

H = W = 12


class SpatialTransformer(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.flat = keras.layers.Flatten()
        self.loc_hidden = keras.layers.Dense(16, activation="tanh", name="loc_hidden")
        self.loc_theta = keras.layers.Dense(
            6, name="loc_theta",
            kernel_initializer=keras.initializers.RandomNormal(stddev=1e-2),
            bias_initializer=keras.initializers.Constant([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))

    def call(self, images):
        batch = tf.shape(images)[0]
        theta = tf.reshape(self.loc_theta(self.loc_hidden(self.flat(images))), [-1, 2, 3])
        xt, yt = tf.meshgrid(tf.linspace(-1.0, 1.0, W), tf.linspace(-1.0, 1.0, H))
        grid = tf.stack([tf.reshape(xt, [-1]), tf.reshape(yt, [-1]), tf.ones([H * W])])
        src = tf.matmul(theta, tf.tile(grid[None], [batch, 1, 1]))      # (B, 2, H*W)
        pix = (src + 1.0) * tf.constant([[(W - 1) / 2.0], [(H - 1) / 2.0]])
        x = tf.clip_by_value(pix[:, 0], 0.0, W - 1.001)
        y = tf.clip_by_value(pix[:, 1], 0.0, H - 1.001)
        x0 = tf.cast(tf.floor(x), "int32")
        y0 = tf.cast(tf.floor(y), "int32")
        x1, y1 = x0 + 1, y0 + 1
        wx = x - tf.cast(x0, "float32")
        wy = y - tf.cast(y0, "float32")
        b = tf.tile(tf.range(batch)[:, None], [1, H * W])

        def pixel(yy, xx):
            return tf.gather_nd(images, tf.stack([b, yy, xx], axis=-1))

        out = ((1 - wx)[..., None] * (1 - wy)[..., None] * pixel(y0, x0)
               + wx[..., None] * (1 - wy)[..., None] * pixel(y0, x1)
               + (1 - wx)[..., None] * wy[..., None] * pixel(y1, x0)
               + wx[..., None] * wy[..., None] * pixel(y1, x1))
        return tf.reshape(out, [-1, H, W, images.shape[-1]])


class STNClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.stn = SpatialTransformer(name="stn")
        self.flat = keras.layers.Flatten()
        self.cls = keras.layers.Dense(10, name="cls")

    def call(self, x):
        return self.cls(self.flat(self.stn(x)))


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
images = rng.random((64, H, W, 1)).astype("float32")
labels = rng.integers(0, 10, size=64)

model = STNClassifier()
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(4):
    loss = train_step(images[step * 16:(step + 1) * 16], labels[step * 16:(step + 1) * 16])
print("loss", float(loss))
