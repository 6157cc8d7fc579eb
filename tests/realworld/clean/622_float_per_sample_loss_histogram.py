"""Clean control 622 (expected clean).

The "per-sample losses should look normally distributed" objective computed
in TensorFlow: per-sample losses come from a reduction=NONE loss object and
the distance to a normal distribution is a moment-matching term (skewness and
excess kurtosis) built from tf ops, so the tape sees a differentiable loss.
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
loss_object = keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, reduction=keras.losses.Reduction.NONE)


def distance_to_normal(losses):
    centered = losses - tf.reduce_mean(losses)
    std = tf.sqrt(tf.reduce_mean(tf.square(centered)) + 1e-6)
    z = centered / std
    skew = tf.reduce_mean(z ** 3)
    excess_kurtosis = tf.reduce_mean(z ** 4) - 3.0
    return tf.square(skew) + tf.square(excess_kurtosis)


def loss(model, x, y):
    y_ = model(x)
    losses = loss_object(y_true=y, y_pred=y_)
    return distance_to_normal(losses) + tf.reduce_mean(losses)


def grad(model, inputs, targets):
    with tf.GradientTape() as tape:
        loss_value = loss(model, inputs, targets)
        tape.watch(model.trainable_variables)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


features = np.random.rand(32, 4).astype("float32")
labels = np.random.randint(0, 3, size=32)
loss_value, grads = grad(model, features, labels)
assert all(g is not None for g in grads)
print("loss_value:", float(loss_value))
print("All gradients present:", len(grads))
