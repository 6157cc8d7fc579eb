"""Clean control 750 (expected clean).

The mixed-precision regression of control 749 trained by model.fit: Keras wraps the
optimizer's update in dynamic loss scaling, the first step's scaled float16 gradients
overflow, the optimizer skips that step and lowers its scale.
Setting: Keras 3 mixed_float16 policy, LossScaleOptimizer, model.fit (graph mode).
"""
import keras
import numpy as np

keras.utils.set_random_seed(0)
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, dtype="float32")])
model.compile(optimizer=keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3), initial_scale=2.0**30),
              loss="mse")
x = (100 * np.random.randn(64, 16)).astype("float32")
y = (100 * np.random.randn(64, 1)).astype("float32")
model.fit(x, y, batch_size=64, epochs=2, verbose=0)
print("scale", float(model.optimizer.dynamic_scale))
