"""Real-world control 834 (twin of case 824).

Source: https://github.com/tensorflow/tensorflow/issues/52175
Same from-scratch classifier as case 824, fixed the usual way: pixels are
scaled to [0, 1], the model returns logits and the loss is
tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(...)), whose gradient (softmax - labels)
does not vanish the way the gradient through a saturated tf.nn.softmax does.
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
    return tf.reshape(x, [-1, 32 * 32 * 3]) / 255.0


def forward(x):
    return tf.matmul(x, W) + b


def activate(x):
    return forward(x)  # logits; the softmax lives in the loss


def model(x):
    x = flatten(x)
    return activate(x)


def cross_entropy(y_label, y_pred):
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_label, logits=y_pred))


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
