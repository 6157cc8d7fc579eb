"""Clean control 749 (expected clean).

Mixed precision with dynamic loss scaling: the loss is multiplied by a large initial scale
before the gradient, so the float16 gradients of the first step overflow to inf. That is
how LossScaleOptimizer works: it finds the non-finite unscaled gradients, skips that step
and lowers the scale; later steps train.
Setting: Keras 3 mixed_float16 policy, LossScaleOptimizer, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3), initial_scale=2.0**30)
x = (100 * np.random.randn(64, 16)).astype("float32")
y = (100 * np.random.randn(64, 1)).astype("float32")
for step in range(2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)
print("scale", float(optimizer.dynamic_scale))
