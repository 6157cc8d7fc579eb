"""Real-world case 405.

Source: https://github.com/tensorflow/tensorflow/issues/55812
Bug: "I'm building a custom loss function while converting Tensors into NumPy
arrays by using .numpy(), which results in 'Gradients loss'". The loss takes
the error to NumPy to up-weight the entries where y_true > 5 with a masked
assignment, and hands the result back as a new tensor: the loss no longer
depends on the model, and fit raises "No gradients provided for any variable".
Setting: Keras 3 Sequential regressor, model.fit(run_eagerly=True) on a
tf.data pipeline, custom loss function.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


def penalised_mse(y_true, y_pred):
    error = (y_true - y_pred).numpy()
    mask = y_true.numpy() > 5
    error[mask] = error[mask] * 1.5
    return tf.reduce_mean(tf.square(tf.convert_to_tensor(error)))


x = np.random.rand(64, 8).astype("float32")
y = (10 * x[:, :1]).astype("float32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=penalised_mse, run_eagerly=True)
model.fit(ds, epochs=1, verbose=2)
