"""Clean control 789 (expected clean).

Twin of case 769 (https://github.com/voxelmorph/voxelmorph/issues/178): the
window variances of the NCC loss are clamped to a small positive floor before
the square root, so the float32 cancellation over the flat air background can
no longer make I_var * J_var negative.
Setting: Keras 3 subclassed model, fit + custom train_step, image registration.
"""
import numpy as np
import tensorflow as tf
import keras

rng = np.random.default_rng(0)
n, size = 16, 64
fixed = (1024.0 + rng.normal(0.0, 0.05, size=(n, size, size, 1))).astype("float32")  # air, CT offset 1024
fixed[:, 20:44, 20:44, 0] = rng.uniform(1040.0, 1400.0, size=(n, 24, 24))
moving = np.roll(fixed, shift=2, axis=1) + rng.normal(0.0, 2.0, size=fixed.shape).astype("float32")


def ncc_loss(I, J, win=9):
    I2 = I * I
    J2 = J * J
    IJ = I * J
    sum_filt = tf.ones([win, win, 1, 1])
    I_sum = tf.nn.conv2d(I, sum_filt, [1, 1, 1, 1], "SAME")
    J_sum = tf.nn.conv2d(J, sum_filt, [1, 1, 1, 1], "SAME")
    I2_sum = tf.nn.conv2d(I2, sum_filt, [1, 1, 1, 1], "SAME")
    J2_sum = tf.nn.conv2d(J2, sum_filt, [1, 1, 1, 1], "SAME")
    IJ_sum = tf.nn.conv2d(IJ, sum_filt, [1, 1, 1, 1], "SAME")
    win_size = win * win
    cross = IJ_sum - I_sum * J_sum / win_size + 1e-5
    I_var = tf.maximum(I2_sum - I_sum ** 2 / win_size, 1e-5)
    J_var = tf.maximum(J2_sum - J_sum ** 2 / win_size, 1e-5)
    cc = cross / ((I_var * J_var) ** 0.5)
    return -tf.reduce_mean(cc)


class RegistrationNet(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")
        self.conv2 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")
        self.out = keras.layers.Conv2D(1, 3, padding="same")

    def call(self, moving):
        return moving + self.out(self.conv2(self.conv1(moving)))

    def train_step(self, data):
        moving, fixed = data
        with tf.GradientTape() as tape:
            warped = self(moving, training=True)
            loss = ncc_loss(fixed, warped)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"ncc_loss": loss}


model = RegistrationNet(name="regnet")
model.compile(optimizer=keras.optimizers.Adam(1e-4))
history = model.fit(moving, fixed, batch_size=4, epochs=4, verbose=0)
print("loss per epoch:", history.history["ncc_loss"])
