"""Real-world case 253.

Source: https://github.com/tensorflow/tensorflow/issues/35267
Bug: a two-input, two-output functional model is compiled with a loss for
`output_a` only; the `output_b` head (fed by its own input) is part of the
model's trainable variables but no loss depends on it, so its kernel and
bias get no gradient (TF 2.1 raised; tf_keras now warns "Gradients do not
exist for variables ['output_b/kernel:0', 'output_b/bias:0']").
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

model.compile(optimizer="sgd", loss={"output_a": "mse"})

x = {"input_a": np.random.rand(32, 10).astype("float32"), "input_b": np.random.rand(32, 20).astype("float32")}
y = {"output_a": np.random.rand(32, 1).astype("float32")}
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
