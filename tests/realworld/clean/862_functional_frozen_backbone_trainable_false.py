"""Control 862 (look-alike of case 462).

Source: https://keras.io/guides/transfer_learning/ (freezing a backbone with stop_gradient instead of trainable=False)
The backbone is frozen with `trainable = False` and the loop asks for the trainable
variables only; `stop_gradient` is kept on a target-side value (a detached copy for a metric).
Setting: Keras 3 functional model, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((8,))
backbone = keras.layers.Dense(16, activation="relu", name="backbone_dense")
backbone.trainable = False
hidden = backbone(inputs)
outputs = keras.layers.Dense(2, name="classifier")(hidden)
model = keras.Model(inputs, [outputs, keras.ops.stop_gradient(hidden)])
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
x = np.random.rand(32, 8).astype("float32")
y = np.random.randint(0, 2, size=(32,))

for step in range(3):
    with tf.GradientTape() as tape:
        logits, detached = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
