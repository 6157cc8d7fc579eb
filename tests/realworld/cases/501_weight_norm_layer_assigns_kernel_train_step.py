"""Real-world case 501.

Source: https://github.com/tensorflow/addons/pull/219
Bug: a weight-normalised Dense layer (w = g * v / ||v||) stores the normalised
kernel into a non-trainable variable with `self.kernel.assign(...)` inside
`call` and then multiplies by that variable. An assignment is not
differentiable: the tape sees only a read of `kernel`, so the direction `v` and
the scale `g` get no gradient and Keras warns "Gradients do not exist for
variables [.../v, .../g]" while the bias and the output layer train.
TensorFlow Addons' WeightNormalization hit the same thing (PR #219, closing
issue #216: "The variable assigns were causing broken gradients") and was fixed
by replacing `.assign()` with a plain tensor (`=`).
Setting: Keras 3 custom layer with its own weights (add_weight), subclassed
model overriding train_step, trained with model.fit (tf.function step).
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class WeightNormDense(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        dim = input_shape[-1]
        self.v = self.add_weight(name="v", shape=(dim, self.units), initializer="glorot_uniform")
        self.g = self.add_weight(name="g", shape=(self.units,), initializer="ones")
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.kernel = self.add_weight(name="kernel", shape=(dim, self.units), initializer="zeros", trainable=False)

    def call(self, x):
        self.kernel.assign(self.g * self.v / tf.norm(self.v, axis=0))
        return tf.matmul(x, self.kernel) + self.b


class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = WeightNormDense(32)
        self.out = keras.layers.Dense(1)

    def call(self, x):
        return self.out(tf.nn.relu(self.hidden(x)))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"mse": loss}


x = np.random.rand(128, 8).astype("float32")
y = (x @ np.random.rand(8, 1)).astype("float32")

model = Regressor()
model.compile(optimizer=keras.optimizers.Adam(1e-2))
model.fit(x, y, batch_size=32, epochs=2, verbose=2)
