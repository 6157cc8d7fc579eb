"""Clean control 779 (expected clean).

Twin of case 759: the tf.data pipeline only delivers the raw batches and the
learnable shift/scale normalization is applied inside the training step, under
the GradientTape, so the shift and scale variables receive gradients together
with the network.
Setting: tf.data pipeline feeding a tf.function custom training loop, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
x_all = (rng.normal(size=(512, 8)) * 5.0 + 3.0).astype("float32")
y_all = (x_all @ rng.normal(size=(8, 1)) / 5.0).astype("float32")

input_shift = keras.Variable(np.zeros(8, dtype="float32"), name="input_shift")
input_scale = keras.Variable(np.ones(8, dtype="float32"), name="input_scale")


def preprocess(x):
    return (x - input_shift) * input_scale


dataset = (tf.data.Dataset.from_tensor_slices((x_all, y_all))
           .shuffle(512, seed=0)
           .batch(32))

model = keras.Sequential([
    keras.Input((8,)),
    layers.Dense(32, activation="relu"),
    layers.Dense(1),
], name="regressor")
optimizer = keras.optimizers.Adam(1e-2)
train_vars = model.trainable_variables + [input_shift, input_scale]


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(preprocess(x), training=True) - y))
    grads = tape.gradient(loss, train_vars)
    optimizer.apply_gradients(zip(grads, train_vars))
    return loss


for epoch in range(3):
    for x, y in dataset:
        loss = train_step(x, y)
    print("epoch", epoch, "loss", float(loss))
