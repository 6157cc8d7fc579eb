"""Real-world case 824.

Source: https://github.com/tensorflow/tensorflow/issues/52175
Bug: a from-scratch softmax classifier (raw tf.Variables W, b) on
un-normalised image pixels (0..255). The logits are in the thousands, so
tf.nn.softmax returns an exact one-hot vector, the cross-entropy on the
probabilities, -sum(y * log(p + 1e-10)), is finite, but every gradient that
flows back through the saturated softmax is exactly zero: W and b never
change. (Here W is initialised with tf.random.normal, so the saturation is
there from the first step instead of after the first update.)
Setting: eager custom loop, raw variables, Keras optimizer.
"""
import numpy as np
import tensorflow as tf
import keras

rng = np.random.default_rng(1)
n_classes = 3
images = rng.integers(0, 256, size=(96, 32, 32, 3)).astype("float32")
labels = tf.one_hot(images.mean(axis=(1, 2)).argmax(axis=-1), n_classes)  # dominant colour channel
dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(32)

W = tf.Variable(tf.random.normal([32 * 32 * 3, n_classes], seed=3), name="W")
b = tf.Variable(tf.zeros([n_classes]), name="b")


def flatten(x):
    return tf.reshape(x, [-1, 32 * 32 * 3])


def forward(x):
    return tf.matmul(x, W) + b


def activate(x):
    return tf.nn.softmax(forward(x))


def model(x):
    x = flatten(x)
    return activate(x)


def cross_entropy(y_label, y_pred):
    return -tf.reduce_sum(y_label * tf.math.log(y_pred + 1.e-10))


optimizer = keras.optimizers.SGD(learning_rate=0.05)


def train_step(x, y):
    with tf.GradientTape() as tape:
        current_loss = cross_entropy(y, model(x))
    grads = tape.gradient(current_loss, [W, b])
    optimizer.apply_gradients(zip(grads, [W, b]))
    return current_loss.numpy()


for epoch in range(5):
    for x_batch, y_batch in dataset:
        loss_value = train_step(x_batch, y_batch)
    print("epoch", epoch, "loss", loss_value)
