"""Real-world case 826.

Source: https://github.com/tensorflow/tensorflow/issues/39892
Bug: a two-output source-separation model (piano and noise spectrogram
masks) trained with a custom per-output loss that calls .numpy() on y_true
and y_pred and computes the error in NumPy. In graph mode this fails with
"'Tensor' object has no attribute 'numpy'"; with run_eagerly=True (the
workaround tried) both losses come back as constants with no path to the
weights, and fit stops with "No gradients provided for any variable".
Setting: tf_keras (Keras 2) functional multi-output model, model.fit,
custom loss, run_eagerly=True.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

n_freq = 32
rng = np.random.default_rng(0)
mix = rng.random(size=(256, 8, n_freq)).astype("float32")
piano = (mix * rng.random(size=mix.shape)).astype("float32")
noise = (mix - piano).astype("float32")


def spectral_loss(y_true, y_pred):
    true_spec, pred_spec = y_true.numpy(), y_pred.numpy()
    err = np.mean(np.square(true_spec - pred_spec), axis=(1, 2))
    return tf.convert_to_tensor(err, dtype=tf.float32)


inp = keras.Input(shape=(8, n_freq), name="mixture")
h = layers.Bidirectional(layers.SimpleRNN(16, return_sequences=True))(inp)
piano_mask = layers.TimeDistributed(layers.Dense(n_freq, activation="sigmoid"))(h)
noise_mask = layers.TimeDistributed(layers.Dense(n_freq, activation="sigmoid"))(h)
piano_out = layers.Multiply(name="piano")([piano_mask, inp])
noise_out = layers.Multiply(name="noise")([noise_mask, inp])
model = keras.Model(inp, [piano_out, noise_out])
model.compile(optimizer="adam", loss={"piano": spectral_loss, "noise": spectral_loss}, run_eagerly=True)
model.fit(mix, {"piano": piano, "noise": noise}, batch_size=32, epochs=1, verbose=2)
