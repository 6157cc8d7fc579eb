"""Clean control 1073 (expected clean).

Twin of case 1053: the custom loss returns one value per sample
(`K.mean(..., axis=-1)`) and lets Keras reduce over the global batch, so a
replica that receives an empty batch contributes nothing instead of NaN.
Setting: tf_keras (Keras 2) model.fit under MirroredStrategy on two devices
(two logical CPUs stand in for the report's two GPUs).
"""
import numpy as np
import tensorflow as tf

cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])

Model = tf.keras.models.Model
Input = tf.keras.layers.Input
Dense = tf.keras.layers.Dense
K = tf.keras.backend
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

num_training_samples = 3
batch_size = 1  # the report: "bug also happens with batch_size = 1" on two devices
rng = np.random.default_rng(0)
x_train = rng.normal(size=(num_training_samples, 16)).astype("float32")
y_train = (x_train[:, :1] * 0.5 + 0.1).astype("float32")


def custom_loss(y_true, y_pred):
    return K.mean(K.square(y_true - y_pred), axis=-1)


with strategy.scope():
    inputs = Input(shape=(16,))
    x = Dense(8, activation="relu", name="hidden")(inputs)
    outputs = Dense(1, name="out")(x)
    model = Model(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss=custom_loss)

history = model.fit(x_train, y_train, batch_size=batch_size, epochs=5, verbose=0)
print("loss per epoch:", history.history["loss"])
