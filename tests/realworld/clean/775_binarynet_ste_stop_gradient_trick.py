"""Clean control 775 (expected clean).

Twin of case 755: the same binarized MLP, with the straight-through estimator
written so that it works in TF2: the clipped weights pass the sign through
`x + tf.stop_gradient(tf.sign(x) - x)`, so the kernels get the clipped
identity gradient and train.
Setting: binarized network, custom tf.function train step, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def binarize(x):
    x = tf.clip_by_value(x, -1, 1)
    return x + tf.stop_gradient(tf.sign(x) - x)


class BinaryDense(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform", trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, binarize(self.kernel))


model = keras.Sequential([
    keras.Input((32,)),
    BinaryDense(64, name="bin_dense_1"),
    layers.BatchNormalization(name="bn_1"),
    layers.Activation("hard_tanh"),
    BinaryDense(64, name="bin_dense_2"),
    layers.BatchNormalization(name="bn_2"),
    layers.Activation("hard_tanh"),
    layers.Dense(10, name="logits"),
], name="binary_mlp")
optimizer = keras.optimizers.Adam(1e-2)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 32)).astype("float32")
y_train = (x_train[:, :10].argmax(axis=1)).astype("int32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(512, seed=0).batch(64)
for epoch in range(3):
    for x, y in dataset:
        loss = train_step(x, y)
    print("epoch", epoch, "loss", float(loss))
