"""Real-world case 486.

Source: https://github.com/keras-team/keras/issues/16797
Bug: a custom layer keeps its per-block gates as raw tf.Variable objects appended to
a list. Keras does not track them (the report: "untracked variables are not trained
... If instead of tf.Variable you use self.add_weight, it works in every case"; in
Keras 3 no raw tf.Variable is tracked at all), so they are missing from
model.trainable_variables. The forward pass and the loss use them, but model.fit
never asks the tape for their gradients and the optimizer never updates them: the
gates silently keep their initial value while the rest of the model trains.
Setting: Keras 3 custom Layer inside a subclassed Model, model.fit on a tf.data
pipeline.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
BLOCKS, WIDTH = 3, 4


class BlockGate(keras.layers.Layer):
    def __init__(self, blocks, **kwargs):
        super().__init__(**kwargs)
        self.blocks = blocks

    def build(self, input_shape):
        width = input_shape[-1] // self.blocks
        self.gates = []
        for i in range(self.blocks):
            self.gates.append(tf.Variable(tf.ones((width,)), name=f"gate_{i}"))
        self.shift = self.add_weight(name="shift", shape=(input_shape[-1],), initializer="zeros")

    def call(self, inputs):
        parts = tf.split(inputs, self.blocks, axis=-1)
        gated = [p * tf.sigmoid(g) for p, g in zip(parts, self.gates)]
        return tf.concat(gated, axis=-1) + self.shift


class GatedRegressor(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = keras.layers.Dense(BLOCKS * WIDTH, activation="relu")
        self.gate = BlockGate(BLOCKS)
        self.out = keras.layers.Dense(1)

    def call(self, x):
        return self.out(self.gate(self.hidden(x)))


x = np.random.normal(size=(128, 5)).astype("float32")
y = (x @ np.random.normal(size=(5, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
model = GatedRegressor()
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(dataset, epochs=2, shuffle=False, verbose=0)
print("loss", history.history["loss"])
