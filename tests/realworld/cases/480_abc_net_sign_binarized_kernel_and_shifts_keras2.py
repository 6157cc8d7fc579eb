"""Real-world case 480.

Source: https://github.com/layog/Accurate-Binary-Convolution-Network/issues/6
Bug: an ABC-Net style layer approximates its real-valued kernel by a weighted sum of M
binary kernels, sign(W - mean(W) + u_m * std(W)), with trainable shift parameters u_m
and scales beta_m. The binarization is a bare tf.sign, whose gradient is defined as 0:
"I don't think weights get updated because of the tf.sign function cutting off
backprop gradients". The kernel and the shift parameters get an all-zero gradient on
every step, so the binary layers stay "constant feature extractors and all the
learning happens in the last ... float fully connected layers"; training runs
without any error or warning.
Setting: tf_keras (Keras 2) custom Layer (weights in build, M binary kernels in call)
in a Sequential classifier, model.fit.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
np.random.seed(0)
keras = tf.keras


class ABCDense(keras.layers.Layer):
    def __init__(self, units, num_binary=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.num_binary = num_binary

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform")
        self.shift_parameters = self.add_weight(
            name="shift_parameters", shape=(self.num_binary,),
            initializer=keras.initializers.Constant(np.linspace(-1.0, 1.0, self.num_binary)))
        self.beta_values = self.add_weight(name="beta_values", shape=(self.num_binary,),
                                           initializer="ones")

    def call(self, inputs):
        mean, var = tf.nn.moments(self.kernel, axes=[0, 1])
        std = tf.sqrt(var)
        out = 0.0
        for m in range(self.num_binary):
            binarized = tf.sign(self.kernel - mean + self.shift_parameters[m] * std)
            out += self.beta_values[m] * tf.matmul(inputs, binarized)
        return out


model = keras.Sequential([
    keras.layers.InputLayer(input_shape=(20,)),
    ABCDense(32),
    keras.layers.ReLU(),
    ABCDense(32),
    keras.layers.ReLU(),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(4),
])
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
x = np.random.normal(size=(128, 20)).astype("float32")
y = np.random.randint(0, 4, size=(128,))
history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
print("loss", history.history["loss"])
