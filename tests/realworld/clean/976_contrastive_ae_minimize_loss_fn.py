"""Clean control 976 (expected clean).

Look-alike of case 576: the contrastive autoencoder's forward pass and combined
contrastive + reconstruction loss are computed inside the loss callable handed
to optimizer.minimize(), so the tape minimize() opens records them and every
encoder/decoder weight gets a gradient.
Setting: tf_keras (Keras 2) functional autoencoder, optimizer.minimize, eager loop.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras


class Autoencoder:
    def __init__(self, dims, activation="relu"):
        self.dims = dims
        self.act = activation

    def build(self):
        n_stacks = len(self.dims) - 1
        input_ = keras.Input(shape=(self.dims[0],), name="input")
        h = input_
        for i in range(n_stacks - 1):
            h = keras.layers.Dense(self.dims[i + 1], activation=self.act, name="encoder_%d" % i)(h)
        encoded = keras.layers.Dense(self.dims[-1], name="encoder_%d" % (n_stacks - 1))(h)
        h = encoded
        for i in range(n_stacks - 1, 0, -1):
            h = keras.layers.Dense(self.dims[i], activation=self.act, name="decoder_%d" % i)(h)
        out = keras.layers.Dense(self.dims[0], name="decoder_0")(h)
        return keras.Model(input_, out, name="AE"), keras.Model(input_, encoded, name="encoder")


rng = np.random.default_rng(0)
centers = rng.normal(size=(4, 20)).astype("float32")
y_train = rng.integers(0, 4, size=512)
X_train = (centers[y_train] + 0.3 * rng.normal(size=(512, 20))).astype("float32")

ae_model, encoder_model = Autoencoder([20, 16, 8, 4]).build()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
batch_size, margin, lambda_1 = 32, 10.0, 0.1
left_p = tf.range(0, batch_size // 2)
right_p = tf.range(batch_size // 2, batch_size)

for epoch in range(40):
    idx = rng.permutation(len(X_train))[:batch_size]
    batch_x, batch_y = X_train[idx], y_train[idx].astype("float32")
    is_same = tf.cast(tf.equal(tf.gather(batch_y, left_p), tf.gather(batch_y, right_p)), tf.float32)

    def loss_fn():
        encoded = encoder_model(batch_x)
        out = ae_model(batch_x)
        dist = tf.sqrt(tf.reduce_sum(tf.square(tf.gather(encoded, left_p) - tf.gather(encoded, right_p)), 1) + 1e-10)
        contrastive_loss = is_same * dist + (1.0 - is_same) * tf.nn.relu(margin - dist)
        contrastive_loss = tf.reduce_mean(contrastive_loss)
        ae_loss = tf.reduce_mean(keras.losses.MSE(batch_x, out))
        return lambda_1 * contrastive_loss + ae_loss

    optimizer.minimize(loss=loss_fn, var_list=ae_model.trainable_variables)
    if epoch % 10 == 0 or epoch == 39:
        print("epoch", epoch, "loss", float(loss_fn()))
