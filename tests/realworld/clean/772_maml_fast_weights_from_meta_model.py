"""Clean control 772 (expected clean).

Twin of case 752: the inner step is taken on the meta model itself and the
copy's layers get fast weights computed from the meta model's variables
(kernel - lr * grad), so the test loss depends on the meta model and the outer
tape returns second-order meta-gradients for every variable.
Setting: meta-learning (second order), eager nested GradientTapes, tf_keras (Keras 2).
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras


class MetaModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden1 = keras.layers.Dense(5, input_shape=(1,))
        self.out = keras.layers.Dense(1)

    def forward(self, x):
        x = keras.activations.relu(self.hidden1(x))
        x = self.out(x)
        return x


def copy_model(model, x):
    copied_model = MetaModel()
    copied_model.forward(x)
    copied_model.set_weights(model.get_weights())
    return copied_model


def compute_loss(model, x, y):
    logits = model.forward(x)
    return tf.reduce_mean(keras.losses.mean_squared_error(y, logits))


def sine_task(rng, n=10):
    amp, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
    x = rng.uniform(-5, 5, size=(n, 1)).astype("float32")
    return x, (amp * np.sin(x + phase)).astype("float32")


rng = np.random.default_rng(0)
meta_model = MetaModel()
meta_model.forward(tf.zeros((1, 1)))
optimizer = keras.optimizers.Adam()
lr_inner = 0.01

for step in range(3):
    x, y = sine_task(rng)
    with tf.GradientTape() as test_tape:
        with tf.GradientTape() as train_tape:
            train_loss = compute_loss(meta_model, x, y)
        gradients = train_tape.gradient(train_loss, meta_model.trainable_variables)
        model_copy = copy_model(meta_model, x)
        model_copy.hidden1.kernel = tf.subtract(meta_model.hidden1.kernel, tf.multiply(lr_inner, gradients[0]))
        model_copy.hidden1.bias = tf.subtract(meta_model.hidden1.bias, tf.multiply(lr_inner, gradients[1]))
        model_copy.out.kernel = tf.subtract(meta_model.out.kernel, tf.multiply(lr_inner, gradients[2]))
        model_copy.out.bias = tf.subtract(meta_model.out.bias, tf.multiply(lr_inner, gradients[3]))
        test_loss = compute_loss(model_copy, x, y)
    gradients = test_tape.gradient(test_loss, meta_model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, meta_model.trainable_variables))
    print("step", step, "test loss", float(test_loss))
