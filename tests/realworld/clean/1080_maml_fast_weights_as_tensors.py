"""Clean control 1080 (expected clean).

Twin of case 1060 (MAML on sine regression): the adapted copy gets "fast
weights" that are tensors computed from the meta-model's variables,
kernel - lr * grad, instead of assigned values, so the query loss is a
differentiable function of the meta-model and the meta-gradient exists.
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


def copy_model_with_fast_weights(model, x, gradients, lr):
    copied_model = SineModel()
    copied_model(tf.convert_to_tensor(x))  # build the layers
    layers_src = [model.hidden1, model.hidden2, model.out]
    layers_dst = [copied_model.hidden1, copied_model.hidden2, copied_model.out]
    for k, (src, dst) in enumerate(zip(layers_src, layers_dst)):
        dst.kernel = src.kernel - lr * gradients[2 * k]
        dst.bias = src.bias - lr * gradients[2 * k + 1]
    return copied_model


np.random.seed(0)
model = SineModel()
model(tf.zeros((1, 1)))
meta_optimizer = keras.optimizers.legacy.Adam(learning_rate=0.001)

losses = []
for step in range(40):
    x, y = generate_batch()
    x_test, y_test = generate_batch()
    with tf.GradientTape() as test_tape:
        with tf.GradientTape() as train_tape:
            train_loss, _ = compute_loss(model, x, y)
        gradients = train_tape.gradient(train_loss, model.trainable_variables)
        model_copy = copy_model_with_fast_weights(model, x, gradients, lr=0.01)
        test_loss, logits = compute_loss(model_copy, x_test, y_test)
    gradients = test_tape.gradient(test_loss, model.trainable_variables)
    meta_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    losses.append(float(test_loss))
    if (step + 1) % 20 == 0:
        print("steps", step - 19, "-", step, "mean query loss", np.mean(losses[-20:]))
