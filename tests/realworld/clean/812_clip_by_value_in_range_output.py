"""Clean control 812 (look-alike of case 412).

Source: https://github.com/tensorflow/tensorflow/issues/44333
The same clipped regressor with its output bias at 0.5: most pre-clip
predictions lie inside [0, 1], so the clip only zeroes the gradient of the
samples that are out of range. A partly-zero gradient through a clip is normal.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((4,)),
    keras.layers.Dense(8, activation="relu", name="hidden"),
    keras.layers.Dense(1, bias_initializer=keras.initializers.Constant(0.5), name="out"),
], name="regressor")
optimizer = keras.optimizers.SGD(0.01)
x = 0.1 * np.random.rand(32, 4).astype("float32")
y = np.random.rand(32, 1).astype("float32")

for step in range(3):
    with tf.GradientTape() as tape:
        pred = tf.clip_by_value(model(x), 0.0, 1.0)
        loss = tf.reduce_mean(tf.square(y - pred))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss), [float(tf.reduce_max(tf.abs(g))) for g in grads])
