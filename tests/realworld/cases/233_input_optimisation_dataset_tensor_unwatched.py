"""Real-world case 233.

Source: https://github.com/tensorflow/tensorflow/issues/36596
Bug: the user wants the gradient of the loss with respect to the model input
(to optimise the input for 400 iterations, model weights fixed), adapting the
"train and evaluate" guide; the input batch comes from a tf.data pipeline as a
plain tensor that the GradientTape never watches, so tape.gradient(loss, input)
is None (the thread's workaround: turn the input into a tf.Variable).
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
    for iteration in range(400):
        with tf.GradientTape() as tape:
            logits = model(input)
            loss_value = loss_fun(target, logits)
        grads = tape.gradient(loss_value, input)
        print("gradient w.r.t. input:", grads)
        if grads is None:
            break
        input = input - 0.01 * grads
    break
