"""Clean control 619 (expected clean).

NoisyNet layer done right: build() creates the mu/sigma weights and the noise,
and call() computes mu + sigma * eps on every call, so the kernel and bias are
recorded by the GradientTape and every weight gets a gradient.
Setting: subclassed Keras 3 model (sublayers built in build()), eager custom training loop (RL).
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)


class NoisyDense(keras.layers.Layer):
    def __init__(self, units, std_init=0.5):
        super().__init__()
        self.units = units
        self.std_init = std_init

    def build(self, input_shape):
        self.reset_noise(input_shape[-1])
        mu_range = 1 / np.sqrt(input_shape[-1])
        mu_init = keras.initializers.RandomUniform(-mu_range, mu_range)
        sigma_init = keras.initializers.Constant(self.std_init / np.sqrt(self.units))
        self.weight_mu = self.add_weight(shape=(input_shape[-1], self.units), initializer=mu_init, name="weight_mu")
        self.weight_sigma = self.add_weight(shape=(input_shape[-1], self.units), initializer=sigma_init, name="weight_sigma")
        self.bias_mu = self.add_weight(shape=(self.units,), initializer=mu_init, name="bias_mu")
        self.bias_sigma = self.add_weight(shape=(self.units,), initializer=sigma_init, name="bias_sigma")

    def call(self, inputs):
        kernel = self.weight_mu + self.weight_sigma * self.weights_eps
        bias = self.bias_mu + self.bias_sigma * self.bias_eps
        return tf.matmul(inputs, kernel) + bias

    def _scale_noise(self, dim):
        noise = tf.random.normal([dim])
        return tf.sign(noise) * tf.sqrt(tf.abs(noise))

    def reset_noise(self, input_dim):
        eps_in, eps_out = self._scale_noise(input_dim), self._scale_noise(self.units)
        self.weights_eps = tf.expand_dims(eps_in, 1) * eps_out
        self.bias_eps = eps_out


class BasicNstepTD(keras.Model):
    def __init__(self, num_actions):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu")
        self.noisy = NoisyDense(num_actions)

    def build(self, input_shape):
        self.hidden.build(input_shape)
        self.noisy.build((input_shape[0], 32))

    def call(self, inputs):
        return self.noisy(self.hidden(inputs))


model = BasicNstepTD(num_actions=3)
optimizer = keras.optimizers.Adam(1e-3)
gamma, n_step = 0.99, 3

states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 3, size=16)
returns = np.random.rand(16).astype("float32")
next_states = np.random.rand(16, 4).astype("float32")

greedy = tf.argmax(model(states[:1]), axis=-1)  # act once: this builds the layers
target = returns + gamma ** n_step * tf.reduce_max(model(next_states), axis=-1)
with tf.GradientTape() as tape:
    q = tf.reduce_sum(model(states) * tf.one_hot(actions, 3), axis=-1)
    loss = tf.reduce_mean(tf.square(target - q))
grads = tape.gradient(loss, model.trainable_variables)
missing = [v.path for g, v in zip(grads, model.trainable_variables) if g is None]
assert not missing, missing
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("All gradients present:", len(grads))
