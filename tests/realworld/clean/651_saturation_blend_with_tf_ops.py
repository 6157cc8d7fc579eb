"""Clean control 651 (look-alike of case 251).

Source: https://github.com/tensorflow/tensorflow/issues/126083
The same learned saturation augmentation, written as a blend between the
image and its grayscale version (the definition adjust_saturation follows
for factors near 1) with differentiable ops, so the factor and the
classifier are all trained.
Setting: Keras 3 custom layer (weight made in build()), functional model,
custom training loop in a @tf.function step.
"""
import keras
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


class LearnableSaturation(keras.layers.Layer):
    def build(self, input_shape):
        self.factor = self.add_weight(shape=(), initializer="ones", name="factor")

    def call(self, images):
        gray = tf.image.rgb_to_grayscale(images)
        return gray + self.factor * (images - gray)


inputs = keras.Input((8, 8, 3))
x = LearnableSaturation()(inputs)
x = keras.layers.Conv2D(4, 3, activation="relu")(x)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(3)(x)
model = keras.Model(inputs, outputs)

loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return grads


images = np.random.rand(4, 8, 8, 3).astype("float32")
labels = np.random.randint(0, 3, size=4)
assert all(g is not None for g in train_step(images, labels))
