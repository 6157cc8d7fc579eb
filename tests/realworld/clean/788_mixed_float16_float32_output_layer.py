"""Clean control 788 (expected clean).

Twin of case 768 (https://github.com/tensorflow/tensorflow/issues/56142): the
output Dense layer is given dtype="float32", as the mixed-precision guide
asks, so the price loss is computed in float32 and stays finite.  The first
steps' scaled gradients (loss scale 2**15) still overflow float16 in the
hidden layers; the LossScaleOptimizer skips those steps and lowers the scale,
by design.
Setting: Keras 3 fit + custom train_step with LossScaleOptimizer.scale_loss, mixed precision.
"""
import numpy as np
import tensorflow as tf
import keras

keras.mixed_precision.set_global_policy("mixed_float16")

rng = np.random.default_rng(0)
features = rng.normal(size=(1024, 12)).astype("float32")
prices = (450.0 + features @ rng.normal(0.0, 60.0, size=(12, 1))).astype("float32")  # k$


def price_loss(y_true, y_pred):
    y_true = tf.cast(y_true, y_pred.dtype)
    return tf.reduce_mean(tf.square(y_true - y_pred))


class PriceModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden1 = keras.layers.Dense(64, activation="relu")
        self.hidden2 = keras.layers.Dense(64, activation="relu")
        self.price = keras.layers.Dense(1, dtype="float32")
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x):
        return self.price(self.hidden2(self.hidden1(x)))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = price_loss(y, y_pred)
            scaled_loss = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


model = PriceModel(name="price_model")
model.compile(optimizer=keras.optimizers.Adam(1e-2))
history = model.fit(features, prices, batch_size=64, epochs=3, verbose=0)
print("loss per epoch:", history.history["loss"])
