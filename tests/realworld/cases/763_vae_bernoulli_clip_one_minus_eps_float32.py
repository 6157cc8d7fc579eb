"""Real-world case 763.

Source: https://github.com/hwalsuklee/tensorflow-mnist-VAE/issues/4
Bug: the Bernoulli decoder's output is clipped to [1e-8, 1 - 1e-8] before
x * log(y) + (1 - x) * log(1 - y), but 1 - 1e-8 rounds to exactly 1.0 in
float32, so the clip does not protect log(1 - y).  The decoder's output bias
starts at the log-odds of the pixel means, the always-on ruler line of the
scans saturates the sigmoid to 1.0, log(1 - y) is -inf and (1 - x) * -inf is
NaN: the loss is NaN from the first step.
Setting: tf.function custom loop, Keras 3 subclassed encoder/decoder, Adam.
"""
import numpy as np
import tensorflow as tf
import keras

dim_img = 28 * 28
dim_z = 8
n_hidden = 256

rng = np.random.default_rng(0)
images = (rng.random((512, 28, 28)) < 0.15).astype("float32")
images[:, 0, :] = 1.0  # ruler line printed on every scanned form
x_train = images.reshape(-1, dim_img)

p = np.clip(x_train.mean(axis=0, dtype=np.float64), 1e-8, 1 - 1e-8)
bias_init = np.log(p / (1 - p)).astype("float32")


class GaussianMLPEncoder(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.h0 = keras.layers.Dense(n_hidden, activation="elu")
        self.h1 = keras.layers.Dense(n_hidden, activation="tanh")
        self.out = keras.layers.Dense(2 * dim_z)

    def call(self, x):
        params = self.out(self.h1(self.h0(x)))
        mean = params[:, :dim_z]
        stddev = 1e-6 + tf.nn.softplus(params[:, dim_z:])
        return mean, stddev


class BernoulliMLPDecoder(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.h0 = keras.layers.Dense(n_hidden, activation="tanh")
        self.h1 = keras.layers.Dense(n_hidden, activation="elu")
        self.out = keras.layers.Dense(dim_img, activation="sigmoid",
                                      bias_initializer=keras.initializers.Constant(bias_init))

    def call(self, z):
        return self.out(self.h1(self.h0(z)))


class VAE(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = GaussianMLPEncoder(name="encoder")
        self.decoder = BernoulliMLPDecoder(name="decoder")

    def call(self, x):
        mu, sigma = self.encoder(x)
        z = mu + sigma * tf.random.normal(tf.shape(mu), 0, 1, dtype=tf.float32)
        return self.decoder(z), mu, sigma


model = VAE(name="vae")
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        y, mu, sigma = model(x)
        y = tf.clip_by_value(y, 1e-8, 1 - 1e-8)
        marginal_likelihood = tf.reduce_sum(x * tf.math.log(y) + (1 - x) * tf.math.log(1 - y), 1)
        kl_divergence = 0.5 * tf.reduce_sum(tf.square(mu) + tf.square(sigma) - tf.math.log(1e-8 + tf.square(sigma)) - 1, 1)
        loss = -tf.reduce_mean(marginal_likelihood) + tf.reduce_mean(kl_divergence)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


dataset = tf.data.Dataset.from_tensor_slices(x_train).shuffle(512, seed=0).batch(128)
for epoch in range(2):
    for batch in dataset:
        loss = train_step(batch)
    print("epoch %d: L_tot %.4f" % (epoch, float(loss)))
