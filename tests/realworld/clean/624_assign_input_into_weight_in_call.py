"""Clean control 624 (expected clean).

The log-posterior is computed from the proposal x itself; the model still
records the last proposal in its weight with self.w.assign(x) (bookkeeping),
but the returned density does not read the weight back, so the gradient with
respect to x exists.
Setting: subclassed Keras 3 model, eager GradientTape on a watched input.
"""
import tensorflow as tf
import keras


class DummyModel(keras.Model):
    def __init__(self):
        super().__init__()

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(), dtype="float64", initializer="zeros", trainable=False)

    def call(self, x):
        self.w.assign(x)
        return -0.5 * x ** 2


model = DummyModel()


def log_posterior(x):
    return model(x)


x = tf.constant(1.5, dtype=tf.float64)
with tf.GradientTape() as tape:
    tape.watch(x)
    lp = log_posterior(x)
dlp = tape.gradient(lp, x)
assert dlp is not None
print("d log_posterior / dx:", float(dlp))
