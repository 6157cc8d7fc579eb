"""Real-world case 462.

Source: https://keras.io/guides/transfer_learning/ (freezing a backbone with stop_gradient instead of trainable=False)
Bug: a functional model wraps the backbone's features in `keras.ops.stop_gradient` while
the training loop asks for every trainable variable: the backbone gets None (Keras warns),
only the classifier head trains. The cut is the `stop_gradient` call inside the model's
definition, not the `keras.Model(...)` line.
Setting: Keras 3 functional model, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((8,))
hidden = keras.layers.Dense(16, activation="relu", name="backbone_dense")(inputs)
features = keras.ops.stop_gradient(hidden)
outputs = keras.layers.Dense(2, name="classifier")(features)
model = keras.Model(inputs, outputs)
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
x = np.random.rand(32, 8).astype("float32")
y = np.random.randint(0, 2, size=(32,))

for step in range(3):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
