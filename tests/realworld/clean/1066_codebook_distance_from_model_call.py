"""Real-world control 1066 (twin of case 1046).

Source: https://datascience.stackexchange.com/questions/57878/how-to-use-a-loss-function-that-is-not-differentiable
Fixed: the codewords are produced by calling the model on the messages
inside the tape, so the minimum-distance loss is differentiable with respect
to the encoder's weights.
Setting: Keras 3 Sequential, custom GradientTape loop.
"""
import itertools

import numpy as np
import tensorflow as tf
import keras

np.random.seed(1331)
model = keras.Sequential([
    keras.Input(shape=(2,)),
    keras.layers.Dense(3, activation="sigmoid",
                       kernel_initializer=keras.initializers.RandomNormal(stddev=0.01)),
], name="find_code")
optimizer = keras.optimizers.Adam()

input_bit = np.array([list(k) for k in itertools.product([0, 1], repeat=2)], dtype="float32")
for step in range(10):
    with tf.GradientTape() as tape:
        code_out = model(input_bit, training=True)
        distances = []
        for i in range(0, 4):
            for j in range(i + 1, 4):
                distances.append(tf.linalg.norm(code_out[i] - code_out[j]))
        min_dist = tf.reduce_min(tf.stack(distances))
        loss = -min_dist
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("min distance", float(min_dist))
