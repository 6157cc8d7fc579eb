"""Clean control 633 (expected clean).

The input-optimisation loop of case 233 with tape.watch(input) at the start of
every tape block, so the gradient of the loss w.r.t. the (updated) input batch
exists at each iteration.
Setting: Keras 2 (tf_keras), functional model on a small CNN backbone, eager
GradientTape over a tf.data batch.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


def loss_fun(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)
    return loss


x = np.random.rand(4, 24, 40, 3).astype(np.float32)
y = np.random.rand(4, 1).astype(np.float32)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(1)

inputs = tf.keras.Input(shape=(24, 40, 3))
features = tf.keras.layers.Conv2D(8, 3, strides=2, activation="relu")(inputs)
x = tf.keras.layers.GlobalAveragePooling2D()(features)
output = tf.keras.layers.Dense(1)(x)
model = tf.keras.models.Model(inputs=inputs, outputs=output)

for input, target in dataset:
    for iteration in range(3):
        with tf.GradientTape() as tape:
            tape.watch(input)
            logits = model(input)
            loss_value = loss_fun(target, logits)
        grads = tape.gradient(loss_value, input)
        assert grads is not None
        input = input - 0.01 * grads
    print("optimised input, loss:", float(loss_value[0]))
    break
