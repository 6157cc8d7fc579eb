"""Real-world case 767.

Source: https://github.com/tensorflow/models/pull/8221
Bug: the LFADS-style Poisson read-out turns the log-rates into rates with an
unguarded tf.exp.  The spike counts go into the encoder as raw counts per bin,
so some log-rates of the untrained network are above 88, exp overflows float32
to inf and the Poisson negative log-likelihood (rates - x * log_rates) is inf
from the first step.
Setting: tf.function custom loop, Keras 3 subclassed model, Adam.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
n_neurons = 40
n_factors = 8

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
        rates = tf.exp(log_rates)
        return rates, log_rates


model = PoissonAutoencoder(name="lfads")
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        rates, log_rates = model(x)
        nll = tf.reduce_sum(rates - x * log_rates, axis=1)
        cost = tf.reduce_mean(nll)
    grads = tape.gradient(cost, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return cost


dataset = tf.data.Dataset.from_tensor_slices(spikes).shuffle(1024, seed=0).batch(128)
for epoch in range(2):
    for step, batch in enumerate(dataset):
        cost = train_step(batch)
        if epoch == 0 and step == 0:
            print("first step cost", float(cost))
    print("epoch", epoch, "cost", float(cost))
