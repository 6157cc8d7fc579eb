"""Clean control 968 (expected clean).

Look-alike of case 568: the custom layer solves the same small system, but
from the CNN's output tensor itself instead of from a variable it was
assigned into, so the gradient flows back into the CNN.
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
        self.lambda_tf = self.add_weight(name="lambda_tf", shape=(1,),
                                         initializer=keras.initializers.Constant(1.0))

    def call(self, features):
        F, B = tf.split(features, 2, axis=-1)
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
history = model.fit(images, targets, batch_size=BATCH, epochs=3, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
