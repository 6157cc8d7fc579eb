"""Real-world case 412.

Source: https://github.com/tensorflow/tensorflow/issues/44333
Bug: "why gradient of clip_by_value(x) is zero, when x is outside of range?"
The regressor's prediction is clipped to [0, 1] with tf.clip_by_value, but its
output bias starts at 3, so every pre-clip prediction is above 1: the clip
passes no gradient for any sample and the model trains on identically zero
gradients, without a word.
Setting: Keras 3 Sequential regressor, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((4,)),
    keras.layers.Dense(8, activation="relu", name="hidden"),
    keras.layers.Dense(1, bias_initializer=keras.initializers.Constant(3.0), name="out"),
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
