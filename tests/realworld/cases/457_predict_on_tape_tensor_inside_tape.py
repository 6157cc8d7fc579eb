"""Real-world case 457.

Source: https://github.com/keras-team/keras/issues/18790 (model.predict inside GradientTape)
Bug: a two-stage model runs the encoder on the batch inside the tape and then calls
`head.predict(features)` on the encoder's output. `predict` returns a NumPy array: the
value left TensorFlow, so neither the encoder nor the head gets a gradient.
Setting: Keras 3, two Sequential models, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

encoder = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu")], name="encoder")
head = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)], name="head")
optimizer = keras.optimizers.SGD(0.01)
x = np.random.rand(32, 5).astype("float32")
y = np.random.rand(32, 1).astype("float32")
variables = encoder.trainable_variables + head.trainable_variables

for step in range(3):
    with tf.GradientTape() as tape:
        features = encoder(x, training=True)
        pred = head.predict(features, verbose=0)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
