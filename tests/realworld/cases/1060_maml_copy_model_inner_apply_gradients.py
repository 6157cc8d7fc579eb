"""Real-world case 1060.

Source: https://github.com/tensorflow/tensorflow/issues/61199
Bug: MAML on sine regression. The inner step copies the meta-model with
`set_weights(model.get_weights())` and adapts the copy with
`train_optimizer.apply_gradients(...)`; the query loss is then computed with
the copy. Both the copy and the inner update are assignments into the copy's
variables, so the query loss is not a differentiable function of the
meta-model's variables: `test_tape.gradient(test_loss, model.trainable_variables)`
is all None and the meta-update fails.
Setting: meta-learning (MAML), nested GradientTapes, tf_keras (Keras 2)
subclassed model, eager custom loop.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras


def sineGenerator(amplitude=None, phase=None):
    if amplitude is None:
        amplitude = np.random.uniform(0.1, 5.0)
    if phase is None:
        phase = np.random.uniform(0.0, np.pi)

    def _gen(x):
        return amplitude * np.sin(x - phase)
    return _gen


def generate_batch(K=10):
    f = sineGenerator()
    x = np.random.uniform(-5.0, 5.0, size=(K, 1)).astype("float32")
    return x, f(x).astype("float32")


class SineModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden1 = keras.layers.Dense(40, input_shape=(1,))
        self.hidden2 = keras.layers.Dense(40)
        self.out = keras.layers.Dense(1)

    def call(self, x):
        x = keras.activations.relu(self.hidden1(x))
        x = keras.activations.relu(self.hidden2(x))
        return self.out(x)


def compute_loss(model, x, y):
    logits = model(x)
    return tf.reduce_mean(keras.losses.mean_squared_error(y, logits)), logits


def copy_model(model, x):
    copied_model = SineModel()
    copied_model(tf.convert_to_tensor(x))  # build the weights
    copied_model.set_weights(model.get_weights())
    return copied_model


np.random.seed(0)
model = SineModel()
model(tf.zeros((1, 1)))
train_optimizer = keras.optimizers.legacy.SGD(learning_rate=0.01)
meta_optimizer = keras.optimizers.legacy.Adam(learning_rate=0.001)

for step in range(2):
    x, y = generate_batch()
    x_test, y_test = generate_batch()
    with tf.GradientTape() as test_tape:
        with tf.GradientTape() as train_tape:
            train_loss, _ = compute_loss(model, x, y)
        gradients = train_tape.gradient(train_loss, model.trainable_variables)
        model_copy = copy_model(model, x)
        train_optimizer.apply_gradients(zip(gradients, model_copy.trainable_variables))
        test_loss, logits = compute_loss(model_copy, x_test, y_test)
    gradients = test_tape.gradient(test_loss, model.trainable_variables)
    print("meta gradients:", gradients)
    meta_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
