"""Real-world case 1003.

Source: https://github.com/keras-team/tf-keras/issues/601
Bug: with the `mixed_float16` policy the user's classifier (Conv2D -> residual
block -> Dense -> Softmax) ends in a float16 softmax, so the cross-entropy is a
float16 tensor. Following the mixed-precision guide they scale the loss by
hand (loss * 2**15) before taking gradients: ~2.3 * 32768 overflows float16
(max 65504), the scaled loss is inf, the unscaled gradients are NaN and the
weights turn NaN after the first update ("Inf loss for get_scaled_loss, or NaN
gradient after scaled loss").
Setting: tf_keras (Keras 2), mixed precision, tf.function custom training loop.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import layers

keras.mixed_precision.set_global_policy("mixed_float16")


def res_block(x, filters):
    y = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    y = layers.Conv2D(filters, 3, padding="same")(y)
    return layers.Activation("relu")(layers.Add()([x, y]))


inputs = keras.Input(shape=(16, 16, 1))
x = layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
x = res_block(x, 8)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(10)(x)
outputs = layers.Softmax()(x)
model = keras.Model(inputs, outputs)

loss_object = keras.losses.SparseCategoricalCrossentropy()
optimizer = keras.optimizers.Adam(1e-3)
loss_scale = 2.0 ** 15


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
        scaled_loss = loss * loss_scale
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = [g / loss_scale for g in scaled_gradients]
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, scaled_loss


rng = np.random.default_rng(0)
x_train = rng.uniform(size=(64, 16, 16, 1)).astype("float32")
y_train = rng.integers(0, 10, size=(64,)).astype("int32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
for epoch in range(4):
    for images, labels in dataset:
        loss, scaled_loss = train_step(images, labels)
        print("epoch", epoch, "loss", float(loss), "scaled", float(scaled_loss))
