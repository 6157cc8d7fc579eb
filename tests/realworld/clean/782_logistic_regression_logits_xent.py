"""Clean control 782 (expected clean).

Twin of case 762 (https://github.com/aymericdamien/TensorFlow-Examples/issues/383):
the model returns logits and the cross-entropy is computed from them with
tf.nn.sparse_softmax_cross_entropy_with_logits (a log-softmax), so no log of
an underflowed probability is ever taken; the pixels are scaled to [0, 1] as
in the example.
Setting: eager custom loop, tf.Variable weights, tf.data batches, SGD.
"""
import numpy as np
import tensorflow as tf

num_classes = 10
num_features = 784
learning_rate = 0.01
training_steps = 20
batch_size = 256

rng = np.random.default_rng(1)
x_train = rng.integers(0, 256, size=(2048, num_features)).astype(np.float32)
y_train = np.argmax(x_train @ rng.normal(size=(num_features, num_classes)), axis=1).astype(np.int64)

x_train = x_train / 255.
train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_data = train_data.repeat().shuffle(5000, seed=0).batch(batch_size).prefetch(1)

W = tf.Variable(tf.random.normal([num_features, num_classes], seed=0), name="weight")
b = tf.Variable(tf.zeros([num_classes]), name="bias")


def logistic_regression(x):
    return tf.matmul(x, W) + b


def cross_entropy(y_pred, y_true):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred))


optimizer = tf.optimizers.SGD(learning_rate)


def run_optimization(x, y):
    with tf.GradientTape() as g:
        pred = logistic_regression(x)
        loss = cross_entropy(pred, y)
    gradients = g.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(gradients, [W, b]))
    return loss


for step, (batch_x, batch_y) in enumerate(train_data.take(training_steps), 1):
    loss = run_optimization(batch_x, batch_y)
    if step % 5 == 0 or step == 1:
        print("step: %i, loss: %f" % (step, loss))
