"""Clean control 637 (expected clean).

The CNN loop of case 237 passing the image batch to the @tf.function
train_step, which runs the model inside the GradientTape.
Setting: Keras 2 (tf_keras), subclassed CNN, custom loop with a @tf.function step.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


class CNNModel(tf.keras.Model):
    def __init__(self):
        super(CNNModel, self).__init__()
        self.conv1 = tf.keras.layers.Conv2D(8, 3, activation="relu")
        self.conv2 = tf.keras.layers.Conv2D(8, 3, activation="relu")
        self.flatten = tf.keras.layers.Flatten()
        self.d1 = tf.keras.layers.Dense(16, activation="relu")
        self.d2 = tf.keras.layers.Dense(10)

    def call(self, x):
        return self.d2(self.d1(self.flatten(self.conv2(self.conv1(x)))))


model = CNNModel()
cross_entropy = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
cnn_optimizer = tf.keras.optimizers.Adam(1e-4)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as cnn_tape:
        logits = model(images)
        loss = cross_entropy(labels, logits)
    gradient_of_cnn = cnn_tape.gradient(loss, model.trainable_variables)
    cnn_optimizer.apply_gradients(zip(gradient_of_cnn, model.trainable_variables))


def train(train_dataset, epochs):
    for epoch in range(epochs):
        for image_batch, label_batch in train_dataset:
            labels = label_batch
            print("images->", image_batch.shape, "labels->", labels.shape)
            train_step(image_batch, labels)


images = np.random.rand(16, 12, 12, 1).astype("float32")
labels = np.random.randint(0, 10, size=16)
train(tf.data.Dataset.from_tensor_slices((images, labels)).batch(8), epochs=1)
