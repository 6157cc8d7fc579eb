"""Clean control 815 (look-alike of case 415).

Source: https://github.com/tensorflow/tensorflow/issues/47033
The report's own pattern: only the int64 nearest-code indices come from
tf.numpy_function; tf.gather on the codebook variable does the lookup, so the
codebook gets its gradient through the gather. A numpy_function that only
computes indices cuts nothing that needs a gradient.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class Codebook(keras.layers.Layer):
    def build(self, input_shape):
        self.codes = self.add_weight(shape=(8, input_shape[-1]), initializer="random_normal", name="codes")

    def call(self, z):
        def nearest(z_np, codes_np):
            d = ((z_np[:, None, :] - codes_np[None]) ** 2).sum(-1)
            return np.argmin(d, axis=1).astype(np.int64)

        idx = tf.numpy_function(nearest, [z, self.codes], tf.int64)
        idx.set_shape(z.shape[:1])
        return tf.gather(self.codes, idx)


encoder = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3, name="enc")], name="encoder")
codebook = Codebook(name="codebook")
codebook.build((None, 3))
optimizer = keras.optimizers.Adam(1e-2)
variables = encoder.trainable_variables + codebook.trainable_variables


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        z = encoder(x)
        q = codebook(z)
        codebook_loss = tf.reduce_mean(tf.square(tf.stop_gradient(z) - q))
        commitment = tf.reduce_mean(tf.square(z - tf.stop_gradient(q)))
        loss = codebook_loss + 0.25 * commitment
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


x = np.random.randn(16, 6).astype("float32")
for step in range(2):
    print(step, float(train_step(x)))
