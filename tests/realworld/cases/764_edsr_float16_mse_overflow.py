"""Real-world case 764.

Source: https://github.com/keras-team/keras/issues/11832
Bug: the EDSR super-resolution model is trained with K.set_floatx('float16')
on images kept in the 0-255 range.  The squared errors of the untrained
network are in the thousands and their mean, accumulated in float16 (largest
finite value 65504), overflows to inf: the loss is inf from the first batch.
Setting: tf.keras 2 (tf_keras), functional EDSR, custom loss, model.fit.
"""
import numpy as np
import tensorflow as tf

K = tf.keras.backend
layers = tf.keras.layers

K.set_floatx("float16")

scale = 2
n_feats = 16
n_resblocks = 2


def res_block(x_in, filters, res_scale=0.1):
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x_in)
    x = layers.Conv2D(filters, 3, padding="same")(x)
    x = layers.Lambda(lambda t: t * res_scale)(x)
    return layers.Add()([x_in, x])


def upsample(x, factor, filters):
    x = layers.Conv2D(filters * factor ** 2, 3, padding="same")(x)
    return layers.Lambda(lambda t: tf.nn.depth_to_space(t, factor))(x)


def edsr(scale, n_feats, n_resblocks):
    x_in = layers.Input(shape=(None, None, 3))
    x = b = layers.Conv2D(n_feats, 3, padding="same")(x_in)
    for _ in range(n_resblocks):
        b = res_block(b, n_feats)
    b = layers.Conv2D(n_feats, 3, padding="same")(b)
    x = layers.Add()([x, b])
    x = upsample(x, scale, n_feats)
    x = layers.Conv2D(3, 3, padding="same")(x)
    return tf.keras.Model(x_in, x, name="edsr")


def mse_loss(y_true, y_pred):
    return K.mean(K.square(y_pred - y_true))


rng = np.random.default_rng(0)
hr = rng.integers(0, 256, size=(16, 48, 48, 3)).astype("float16")
lr = hr.reshape(16, 24, 2, 24, 2, 3).mean(axis=(2, 4)).astype("float16")

model = edsr(scale, n_feats, n_resblocks)
model.compile(optimizer=tf.keras.optimizers.Adam(1e-4), loss=mse_loss)
history = model.fit(lr, hr, batch_size=4, epochs=1, verbose=0)
print("loss per epoch:", history.history["loss"])
