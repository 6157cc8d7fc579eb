"""Clean control 703 (look-alike of case 303).

Source: https://github.com/lucidrains/deep-cross-attention/issues/2
The same layer aggregation, with the projection initialised to small random values (the
maintainer's fix): its ReLU is not stuck at exactly 0.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class LayerAggregate(keras.layers.Layer):
    """Mixes the outputs of earlier layers with weights predicted from the current one."""

    def __init__(self, num_inputs):
        super().__init__()
        self.norm = keras.layers.LayerNormalization()
        self.to_weights = keras.layers.Dense(num_inputs, use_bias=False, kernel_initializer=keras.initializers.RandomNormal(stddev=0.02))

    def call(self, hidden, history):
        weights = tf.nn.relu(self.to_weights(self.norm(hidden)))
        return tf.einsum("bn,bnd->bd", weights, history)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.first = keras.layers.Dense(16, activation="tanh")
        self.second = keras.layers.Dense(16, activation="tanh")
        self.aggregate = LayerAggregate(2)
        self.head = keras.layers.Dense(1)

    def call(self, x):
        h1 = self.first(x)
        h2 = self.second(h1)
        mixed = self.aggregate(h2, tf.stack([h1, h2], axis=1))
        return self.head(h2 + mixed)


model = Net()
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for _ in range(3):
    train_step(np.random.randn(32, 8).astype("float32"), np.random.randn(32, 1).astype("float32"))
