"""Real-world case 564.

Source: https://github.com/tensorflow/tensorflow/issues/40632
Bug: the custom layer creates several weight matrices with add_weight() and
concatenates them with tf.concat inside build(). The concatenation runs once,
when the layer is built, so call() multiplies by a constant tensor that no
longer reads the variables; fit() finds no gradient for any of them.
Setting: Keras 3 custom layer (build/call) in a functional model, model.fit().
"""
import numpy as np
import tensorflow as tf
import keras


class MultiHeadKernel(keras.layers.Layer):
    def __init__(self, units_per_head=4, num_heads=3, **kwargs):
        super().__init__(**kwargs)
        self.units_per_head = units_per_head
        self.num_heads = num_heads

    def build(self, input_shape):
        self.head_kernels = [
            self.add_weight(name=f"head_{i}", shape=(input_shape[-1], self.units_per_head),
                            initializer="glorot_uniform", trainable=True)
            for i in range(self.num_heads)
        ]
        self.kernel = tf.concat(self.head_kernels, axis=-1)

    def call(self, inputs):
        return tf.matmul(inputs, self.kernel)


inputs = keras.Input(shape=(10,))
logits = MultiHeadKernel(name="multi_head_kernel")(inputs)
outputs = keras.layers.Softmax()(logits)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

x = np.random.rand(256, 10).astype("float32")
y = np.random.randint(0, 12, size=(256,))
model.fit(x, y, batch_size=32, epochs=2, verbose=0)
