"""Real-world case 568.

Source: https://github.com/tensorflow/tensorflow/issues/17735
Bug: a custom layer keeps its own variable and, in call(), writes the CNN's
output into it with assign() before solving its small linear system from the
variable. assign() is not differentiable, so the loss reaches the layer's own
variables but never the CNN that produced the values: the convolution and the
feature head get no gradient (Keras warns) and never train.
Setting: subclassed keras.Model with a custom layer (build/call), model.fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

BATCH, DIM = 16, 6


class ExplicitSolveLayer(layers.Layer):
    def __init__(self, batch_size, dim, **kwargs):
        super().__init__(**kwargs)
        self.batch_size, self.dim = batch_size, dim

    def build(self, input_shape):
        self.FB = self.add_weight(name="FB", shape=(self.batch_size, 2 * self.dim), initializer="zeros")
        self.lambda_tf = self.add_weight(name="lambda_tf", shape=(1,),
                                         initializer=keras.initializers.Constant(1.0))

    def call(self, features):
        self.FB.assign(features)
        F, B = tf.split(self.FB, 2, axis=-1)
        return F * B / (tf.square(B) + tf.abs(self.lambda_tf) + 1.0)


class ExplicitGradNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = layers.Conv2D(8, 3, activation="relu", name="conv")
        self.pool = layers.GlobalAveragePooling2D()
        self.fb_head = layers.Dense(2 * DIM, name="fb_head")
        self.solve = ExplicitSolveLayer(BATCH, DIM, name="solve")
        self.out = layers.Dense(1, name="out")

    def call(self, images):
        x = self.pool(self.conv(images))
        return self.out(self.solve(self.fb_head(x)))


images = np.random.rand(128, 10, 10, 1).astype("float32")
targets = np.random.rand(128, 1).astype("float32")
model = ExplicitGradNet()
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
model.fit(images, targets, batch_size=BATCH, epochs=2, verbose=0)
