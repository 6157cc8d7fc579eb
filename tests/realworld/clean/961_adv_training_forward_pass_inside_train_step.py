"""Clean twin of case 561.

Source: https://github.com/ftramer/ensemble-adv-training/issues/4
Fix: pass the images to train_step and run the model inside the
GradientTape, so the forward pass is recorded and the loss depends on the weights.
Setting: custom tf.function train_step, subclassed CNN, adversarial training data.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class CNNModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = layers.Conv2D(16, 3, activation="relu")
        self.conv2 = layers.Conv2D(32, 3, activation="relu")
        self.pool = layers.MaxPooling2D()
        self.flatten = layers.Flatten()
        self.dense1 = layers.Dense(64, activation="relu")
        self.dense2 = layers.Dense(10)

    def call(self, x):
        x = self.pool(self.conv2(self.conv1(x)))
        return self.dense2(self.dense1(self.flatten(x)))


model = CNNModel()
cross_entropy = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
cnn_optimizer = keras.optimizers.Adam(1e-3)

rng = np.random.default_rng(0)
clean_x = rng.random((64, 16, 16, 1)).astype("float32")
adv_x = np.clip(clean_x + 0.1 * np.sign(rng.normal(size=clean_x.shape)), 0.0, 1.0).astype("float32")
train_images = np.concatenate([clean_x, adv_x])
train_labels = np.concatenate([rng.integers(0, 10, size=64)] * 2)
train_dataset = tf.data.Dataset.from_tensor_slices(train_images).batch(32)
train_labels_dataset = tf.data.Dataset.from_tensor_slices(train_labels).batch(32)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as cnn_tape:
        logits = model(images, training=True)
        loss = cross_entropy(labels, logits)
    gradient_of_cnn = cnn_tape.gradient(loss, model.trainable_variables)
    cnn_optimizer.apply_gradients(zip(gradient_of_cnn, model.trainable_variables))
    return loss


def train(train_dataset, train_labels_dataset, epochs):
    for epoch in range(epochs):
        for image_batch, label_batch in zip(train_dataset, train_labels_dataset):
            labels = label_batch
            loss = train_step(image_batch, labels)
        print("epoch", epoch, "loss", float(loss))


train(train_dataset, train_labels_dataset, epochs=2)
