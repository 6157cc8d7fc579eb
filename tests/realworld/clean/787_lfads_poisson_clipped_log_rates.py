"""Clean control 787 (expected clean).

Twin of case 767 (https://github.com/tensorflow/models/pull/8221): the
log-rates are clipped before tf.exp, as in the PR, so the rates stay finite.
The cost also carries the full Poisson likelihood's Stirling term, computed
with tf.where(x > 1, x * log(x) - x + ..., 0): for the empty bins the
unselected branch is 0 * log(0) = NaN, but tf.where never selects it and no
gradient flows into the spike counts.
Setting: tf.function custom loop, Keras 3 subclassed model, Adam.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
n_neurons = 40
n_factors = 8
clip_value = 20.0

rng = np.random.default_rng(0)
true_rates = rng.gamma(2.0, 25.0, size=(1, n_neurons)) * rng.random((1024, 1)) * 2
spikes = rng.poisson(true_rates).astype("float32")


class PoissonAutoencoder(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = keras.layers.Dense(64, activation="relu", name="encoder")
        self.factors = keras.layers.Dense(n_factors, name="factors")
        self.readout = keras.layers.Dense(n_neurons, name="log_rates")

    def call(self, counts):
        factors = self.factors(self.encoder(counts))
        log_rates = self.readout(factors)
        rates = tf.exp(tf.clip_by_value(log_rates, -clip_value, clip_value))
        return rates, log_rates


model = PoissonAutoencoder(name="lfads")
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        rates, log_rates = model(x)
        stirling = tf.where(x > 1.0, x * tf.math.log(x) - x + 0.5 * tf.math.log(2 * np.pi * x), tf.zeros_like(x))
        nll = tf.reduce_sum(rates - x * log_rates + stirling, axis=1)
        cost = tf.reduce_mean(nll)
    grads = tape.gradient(cost, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return cost


dataset = tf.data.Dataset.from_tensor_slices(spikes).shuffle(1024, seed=0).batch(128)
for epoch in range(4):
    for step, batch in enumerate(dataset):
        cost = train_step(batch)
        if epoch == 0 and step == 0:
            print("first step cost", float(cost))
    print("epoch", epoch, "cost", float(cost))
