"""Clean control 964 (expected clean).

Look-alike of case 564: the custom layer keeps the list of weight matrices
built with add_weight() and concatenates them inside call(), so every forward
pass reads the variables and fit() trains all of them.
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

    def call(self, inputs):
        kernel = tf.concat(self.head_kernels, axis=-1)
        return tf.matmul(inputs, kernel)


inputs = keras.Input(shape=(10,))
logits = MultiHeadKernel(name="multi_head_kernel")(inputs)
outputs = keras.layers.Softmax()(logits)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

x = np.random.rand(256, 10).astype("float32")
y = np.random.randint(0, 12, size=(256,))
history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
