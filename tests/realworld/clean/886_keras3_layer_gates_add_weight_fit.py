"""Real-world case 886 (control for 486).

Source: https://github.com/keras-team/keras/issues/16797
Fix: as the report says, the gates are created with self.add_weight (still appended
to a list), so Keras tracks them, model.trainable_variables contains them and
model.fit trains them with the rest of the model.
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
            self.gates.append(self.add_weight(name=f"gate_{i}", shape=(width,), initializer="ones"))
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
