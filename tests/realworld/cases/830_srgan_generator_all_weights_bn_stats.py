"""Real-world case 830.

Source: https://github.com/tensorlayer/SRGAN/issues/143
Bug: in the SRGAN generator pre-training loop the gradient is taken with
respect to all of the generator's weights (G.weights), which include the
BatchNormalization moving_mean / moving_variance. Those statistics are
updated by assignment, not by the loss, so their gradients are None and the
optimizer warns "Gradients do not exist for variables [...moving_mean...]"
at every step; as the reporter found, only the trainable weights should be
passed.
Setting: eager custom loop over a tf.data pipeline, Keras 3 functional
generator with BatchNormalization, MSE content loss.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
hr = rng.random(size=(64, 16, 16, 3)).astype("float32")
lr = hr[:, ::2, ::2, :]
train_ds = tf.data.Dataset.from_tensor_slices((lr, hr)).shuffle(64).batch(16)


def get_G(input_shape):
    nin = keras.Input(input_shape)
    n = layers.Conv2D(16, 3, padding="same", activation="relu")(nin)
    temp = n
    nn = layers.Conv2D(16, 3, padding="same")(n)
    nn = layers.BatchNormalization()(nn)
    nn = layers.ReLU()(nn)
    nn = layers.Conv2D(16, 3, padding="same")(nn)
    nn = layers.BatchNormalization()(nn)
    n = layers.Add()([temp, nn])
    n = layers.UpSampling2D(2)(n)
    nout = layers.Conv2D(3, 1, padding="same", activation="sigmoid")(n)
    return keras.Model(nin, nout, name="generator")


G = get_G((8, 8, 3))
g_optimizer_init = keras.optimizers.Adam(1e-3)
g_vars = G.weights

for epoch in range(2):
    for step, (lr_patchs, hr_patchs) in enumerate(train_ds):
        with tf.GradientTape() as tape:
            fake_hr_patchs = G(lr_patchs, training=True)
            mse_loss = tf.reduce_mean(tf.square(fake_hr_patchs - hr_patchs))
        grad = tape.gradient(mse_loss, g_vars)
        g_optimizer_init.apply_gradients(zip(grad, g_vars))
    print("Epoch: [{}/2] mse: {:.3f}".format(epoch + 1, float(mse_loss)))
