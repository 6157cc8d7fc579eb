"""Real-world case 1096.

Source: https://github.com/kevinzakka/spatial-transformer-network/issues/19
Bug: a spatial-transformer layer samples the input with nearest-neighbour
lookup: the transformed source coordinates are rounded and cast to int32,
then used as tf.gather_nd indices. Integer indices carry no gradient, so the
localisation network that predicts the affine theta gets None for all its
weights (tf_keras warns "Gradients do not exist") and only the classifier
after the transformer learns.
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
        nearest = tf.cast(tf.round(pix), "int32")
        x0 = tf.clip_by_value(nearest[:, 0], 0, W - 1)
        y0 = tf.clip_by_value(nearest[:, 1], 0, H - 1)
        b = tf.tile(tf.range(batch)[:, None], [1, H * W])
        out = tf.gather_nd(images, tf.stack([b, y0, x0], axis=-1))
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
