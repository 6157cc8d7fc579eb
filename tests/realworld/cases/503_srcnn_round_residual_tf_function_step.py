"""Real-world case 503.

Source: https://github.com/tensorflow/tensorflow/issues/18636
Bug: the super-resolution network predicts a residual in quantisation steps and
the user wants integer steps, so the loss applies `tf.round` to the network
output before scaling it and adding it to the low-resolution image. Round has
no gradient: every convolution kernel and bias gets None and the optimizer
raises "No gradients provided for any variable" while the step is traced. The
reporter's loss: tf.reduce_mean(tf.nn.l2_loss(tf.round(Train_output) * Train_tao
/ 2 + Train_img_LR[...] - Train_img_HR)).
Setting: Keras 3 functional, fully convolutional SRCNN (9-1-5), custom
training loop with a @tf.function train step.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
TAU = 2.0


def build_srcnn():
    lr_image = keras.Input(shape=(None, None, 1))
    x = keras.layers.Conv2D(16, 9, padding="same", activation="relu")(lr_image)
    x = keras.layers.Conv2D(8, 1, padding="same", activation="relu")(x)
    steps = keras.layers.Conv2D(1, 5, padding="same")(x)
    return keras.Model(lr_image, steps, name="srcnn")


model = build_srcnn()
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(lr, hr):
    with tf.GradientTape() as tape:
        steps = model(lr, training=True)
        sr = tf.round(steps) * TAU / 2 + lr
        loss = tf.reduce_mean(tf.square(sr - hr))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


hr = np.random.rand(8, 24, 24, 1).astype("float32")
lr = (hr + 0.1 * np.random.randn(*hr.shape)).astype("float32")
for epoch in range(2):
    print("epoch", epoch, "loss", float(train_step(lr, hr)))
