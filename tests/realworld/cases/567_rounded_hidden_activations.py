"""Real-world case 567.

Source: https://github.com/keras-team/keras/issues/9396
Bug: the hidden activations (sigmoid, in [0, 1]) are rounded to 0/1 by a
custom layer before being fed to the next layer. round() has no gradient, so
the layers before the rounding layer get none (Keras warns), and only the
layers after it learn.
Setting: subclassed keras.Model with a custom Layer.call, model.fit().
"""
import numpy as np
import keras
from keras import layers, ops


class BinaryActivation(layers.Layer):
    def call(self, x):
        return ops.round(x)


class BinaryHiddenNet(keras.Model):
    def __init__(self, hidden=32, n_classes=4):
        super().__init__()
        self.hidden1 = layers.Dense(hidden, activation="sigmoid", name="hidden1")
        self.binarize1 = BinaryActivation(name="binarize1")
        self.hidden2 = layers.Dense(hidden, activation="sigmoid", name="hidden2")
        self.classifier = layers.Dense(n_classes, activation="softmax", name="classifier")

    def call(self, inputs):
        h = self.hidden1(inputs)
        h = self.binarize1(h)
        h = self.hidden2(h)
        return self.classifier(h)


x = np.random.rand(512, 16).astype("float32")
y = np.random.randint(0, 4, size=(512,))
model = BinaryHiddenNet()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=64, epochs=2, verbose=0)
