"""Clean control 656 (look-alike of case 256).

Source: https://github.com/tensorflow/tensorflow/issues/32895
The same quickstart model with a plain `call` (no @tf.function on it): the
outer @tf.function train_step traces the layers and every variable gets a
gradient.
Setting: Keras 3 subclassed model, custom training loop with a @tf.function
train_step (the TF quickstart).
"""
import keras
import numpy as np
import tensorflow as tf
from keras.layers import Conv2D, Dense, Flatten

tf.random.set_seed(0)


class MyModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = Conv2D(4, 3, activation="relu")
        self.flatten = Flatten()
        self.d1 = Dense(16, activation="relu")
        self.d2 = Dense(10)

    def call(self, x):
        x = self.conv1(x)
        x = self.flatten(x)
        x = self.d1(x)
        return self.d2(x)


model = MyModel()
loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam()
train_loss = keras.metrics.Mean(name="train_loss")


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)


x_train = np.random.rand(16, 8, 8, 1).astype("float32")
y_train = np.random.randint(0, 10, size=16)
for images, labels in tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(8):
    train_step(images, labels)
print("loss:", float(train_loss.result()))
