"""Real-world case 827.

Source: https://github.com/tensorflow/tensorflow/issues/42889
Bug: a relative-L2 loss, sum ||y - y_hat|| / sum ||y||, written with a norm
(a square root). The sequences are zero-padded and the model multiplies its
prediction by the padding mask, so on every padded time step the residual is
exactly zero; the loss value is finite, but the gradient of sqrt at 0 is inf
and 0 * inf gives NaN gradients for every weight. The thread traced it to
tf.sqrt inside the norm.
Setting: Keras 3 subclassed model with a custom train_step (model.fit),
two inputs (signal + padding mask), keras.ops.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

T, F_IN, F_OUT = 12, 6, 3
rng = np.random.default_rng(0)
lengths = rng.integers(5, T + 1, size=256)
mask = (np.arange(T)[None, :] < lengths[:, None]).astype("float32")
signal = rng.normal(size=(256, T, F_IN)).astype("float32") * mask[..., None]
target = (np.tanh(signal[..., :F_OUT]) + 0.5 * signal[..., F_OUT:]) * mask[..., None]


class MaskedRegressor(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv1D(16, 3, padding="same", activation="tanh")
        self.head = layers.Dense(F_OUT)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, inputs):
        h = self.conv(inputs["signal"])
        return self.head(h) * inputs["mask"][..., None]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            err = ops.norm(y - y_pred, axis=-1)
            ref = ops.norm(y, axis=-1)
            loss = ops.sum(err) / ops.sum(ref)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


model = MaskedRegressor(name="masked_regressor")
model.compile(optimizer=keras.optimizers.Adam(1e-2))
model.fit({"signal": signal, "mask": mask}, target, batch_size=32, epochs=2, verbose=2)
