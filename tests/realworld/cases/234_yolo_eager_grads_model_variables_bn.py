"""Real-world case 234.

Source: https://github.com/penny4860/tf2-eager-yolo3/issues/17
Bug: the eager YOLOv3 training loop returns tape.gradient(loss, model.variables)
and applies them to model.variables; the Darknet conv blocks use
BatchNormalization, whose moving mean/variance are non-trainable, so every step
warns "Gradients do not exist for variables ['stage0/layer_0/moving_mean:0',
...]".
Setting: Keras 2 (tf_keras), subclassed conv-BN-LeakyReLU model, eager
GradientTape custom loop.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


class ConvBlock(tf.keras.layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.conv = tf.keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)
        self.bn = tf.keras.layers.BatchNormalization()

    def call(self, x, training=None):
        return tf.nn.leaky_relu(self.bn(self.conv(x), training=training), alpha=0.1)


class Yolonet(tf.keras.Model):
    def __init__(self, n_outputs=3 * (5 + 2)):
        super().__init__()
        self.block_0 = ConvBlock(8, name="layer_0")
        self.block_1 = ConvBlock(16, name="layer_1")
        self.head = tf.keras.layers.Conv2D(n_outputs, 1)

    def call(self, x, training=None):
        return self.head(self.block_1(self.block_0(x, training), training))


def loss_fn(list_y_trues, logits):
    return tf.reduce_mean(tf.square(list_y_trues - logits))


def _grad_fn(model, images_tensor, list_y_trues):
    with tf.GradientTape() as tape:
        logits = model(images_tensor)
        loss = loss_fn(list_y_trues, logits)
    return tape.gradient(loss, model.variables)


model = Yolonet()
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-4)
xs = np.random.rand(2, 16, 16, 3).astype("float32")
ys = np.random.rand(2, 16, 16, 21).astype("float32")
grads = _grad_fn(model, xs, ys)
print("None gradients for:", [v.name for g, v in zip(grads, model.variables) if g is None])
optimizer.apply_gradients(zip(grads, model.variables))
