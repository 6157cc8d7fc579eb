"""Real-world case 222.

Source: https://github.com/tensorflow/tensorflow/issues/30190
Bug: a research loss measures how far the histogram of the per-sample losses
of a batch is from a normal distribution; each per-sample loss is turned into
a Python number with float(loss) and the distance is computed with NumPy, then
wrapped back with tf.convert_to_tensor, so the tape sees a constant and every
gradient is None.
Setting: Keras 2 (tf_keras) Sequential classifier (Iris tutorial style), eager custom loop.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)
np.random.seed(0)

model = keras.Sequential([
    keras.layers.Dense(10, activation="relu", input_shape=(4,)),
    keras.layers.Dense(10, activation="relu"),
    keras.layers.Dense(3),
])
loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def get_distance_between_samples_and_distribution(losses, bins=8):
    hist, edges = np.histogram(losses, bins=bins, density=True)
    centers = (edges[:-1] + edges[1:]) / 2
    mu, sigma = np.mean(losses), np.std(losses) + 1e-6
    pdf = np.exp(-0.5 * ((centers - mu) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
    return np.sum(np.abs(hist - pdf) * np.diff(edges))


def loss(model, x, y):
    y_ = model(x)
    losses = []
    for i in range(y.shape[0]):
        loss = loss_object(y_true=y[i], y_pred=y_[i])
        losses.append(float(loss))
    dis = get_distance_between_samples_and_distribution(losses)
    return tf.convert_to_tensor(dis, dtype=np.float32)


def grad(model, inputs, targets):
    with tf.GradientTape() as tape:
        loss_value = loss(model, inputs, targets)
        tape.watch(model.trainable_variables)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


features = np.random.rand(32, 4).astype("float32")
labels = np.random.randint(0, 3, size=32)
loss_value, grads = grad(model, features, labels)
print("loss_value:", float(loss_value))
print("None gradients for:", [v.name for g, v in zip(grads, model.trainable_variables) if g is None])
