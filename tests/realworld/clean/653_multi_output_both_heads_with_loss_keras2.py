"""Clean control 653 (look-alike of case 253).

Source: https://github.com/tensorflow/tensorflow/issues/35267
The same two-input, two-output model compiled with a loss for each head, so
both heads are trained.
Setting: Keras 2 (tf_keras) functional multi-input/multi-output model,
compile with a loss dict, model.fit.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)

input_a = keras.layers.Input(shape=(10,), name="input_a")
input_b = keras.layers.Input(shape=(20,), name="input_b")
output_a = keras.layers.Dense(1, name="output_a")(input_a)
output_b = keras.layers.Dense(1, name="output_b")(input_b)
model = keras.Model(inputs=[input_a, input_b], outputs=[output_a, output_b])

model.compile(optimizer="sgd", loss={"output_a": "mse", "output_b": "mse"})

x = {"input_a": np.random.rand(32, 10).astype("float32"), "input_b": np.random.rand(32, 20).astype("float32")}
y = {"output_a": np.random.rand(32, 1).astype("float32"), "output_b": np.random.rand(32, 1).astype("float32")}
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
