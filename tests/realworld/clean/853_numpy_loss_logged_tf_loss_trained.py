"""Control 853 (look-alike of cases 453 and 454).

The same loop with the loss in TensorFlow ops; NumPy computes only a logged metric from the
prediction, inside the tape, and the tf.function twin trains the same way.
Setting: Keras 3 Sequential, eager custom loop and tf.function step.
"""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
x = np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")

for step in range(2):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        mae = np.mean(np.abs(pred - y))
        loss = tf.reduce_mean(tf.abs(pred - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, mae, float(tf.convert_to_tensor(loss)))
