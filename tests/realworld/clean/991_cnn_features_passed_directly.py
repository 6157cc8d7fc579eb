"""Clean control 991 (expected clean).

Source: https://github.com/tensorflow/tensorflow/issues/23621 (fixed form)
The solver layer uses the CNN's foreground/background tensors directly
instead of writing them into variables with assign() and reading them back,
so the gradient of the loss reaches the CNN as well as the solver's lambda.
Setting: functional Keras 3 model with a custom layer (build/call),
compile() + fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

BATCH, H, W = 8, 16, 16


class MattingSolver(layers.Layer):
    """Blends foreground/background estimates with a learned smoothness weight."""

    def build(self, input_shape):
        self.lambda_tf = self.add_weight(name="lamda_tf", shape=(1,),
                                         initializer=keras.initializers.Constant(100.0))

    def call(self, inputs):
        F, B = inputs
        alpha = tf.sigmoid((F - B) / (1.0 + tf.abs(self.lambda_tf) * 0.01))
        return alpha


image = keras.Input(shape=(H, W, 3), batch_size=BATCH)
xf = layers.Conv2D(16, 3, padding="same", activation="relu", name="fg_conv")(image)
Fx = layers.Conv2D(1, 3, padding="same", name="fg_head")(xf)
xb = layers.Conv2D(16, 3, padding="same", activation="relu", name="bg_conv")(image)
Bx = layers.Conv2D(1, 3, padding="same", name="bg_head")(xb)
alpha = MattingSolver(name="solver")([Fx, Bx])
model = keras.Model(image, alpha)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")

rng = np.random.default_rng(0)
images = rng.random((64, H, W, 3)).astype("float32")
mattes = (images.mean(axis=-1, keepdims=True) > 0.5).astype("float32")
model.fit(images, mattes, batch_size=BATCH, epochs=2, verbose=0)
