"""Clean control 967 (expected clean).

Look-alike of case 567: the hidden activations are still rounded to 0/1 in
the forward pass, but with the straight-through trick suggested in the
thread (y = x + stop_gradient(round(x) - x)), so backprop uses the unrounded
values and every layer learns.
Setting: subclassed keras.Model with a custom Layer.call, model.fit().
"""
import numpy as np
import keras
from keras import layers, ops


class BinaryActivation(layers.Layer):
    def call(self, x):
        return x + ops.stop_gradient(ops.round(x) - x)


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
history = model.fit(x, y, batch_size=64, epochs=3, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
