"""Real-world case 459.

Source: https://www.tensorflow.org/guide/intro_to_modules (hand-written Dense as tf.Module)
Bug: a hand-written `tf.Module` dense layer creates its bias but its `__call__` returns
`x @ self.w` only: the bias is never added, so it gets None while the kernel trains.
Setting: tf.Module model, custom loop under tf.function.
"""
import numpy as np
import tensorflow as tf


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        y = tf.matmul(x, self.w)
        return tf.nn.relu(y)


class MLP(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.hidden = Dense(3, 8, name="hidden")
        self.out = tf.Variable(tf.random.normal([8, 1]), name="out")

    def __call__(self, x):
        return self.hidden(x) @ self.out


model = MLP(name="mlp")
optimizer = tf.keras.optimizers.SGD(0.01)
x = tf.constant(np.random.rand(16, 3).astype("float32"))
y = tf.constant(np.random.rand(16, 1).astype("float32"))


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(3):
    print(step, float(train_step()))
