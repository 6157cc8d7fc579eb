"""Control 857 (look-alike of case 457).

Source: https://github.com/keras-team/keras/issues/18790 (model.predict inside GradientTape)
The same two-stage model called directly inside the tape; `predict` runs only after the
step, for a metric, outside the tape.
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
        pred = head(features, training=True)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print(step, float(np.mean((head.predict(encoder.predict(x, verbose=0), verbose=0) - y) ** 2)))
