"""Clean control 1071 (expected clean).

Source: https://github.com/jxyyjm/tensorflow_test/issues/3
Twin of case 1051: pixels scaled to [0, 1] and the hand-written cross entropy
takes log(y + 1e-8), as the report suggests, so the loss stays finite.
Setting: tf_keras (Keras 2) model, tf.function custom training step.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(3)
x_train = rng.integers(0, 256, size=(256, 784)).astype("float32") / 255.0  # pixels scaled to [0, 1]
teacher = rng.normal(size=(784, 10)).astype("float32")
y_train = np.eye(10, dtype="float32")[np.argmax(x_train @ teacher, axis=1)]
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)

model = keras.Sequential([
    keras.layers.Dense(10, activation="softmax", input_shape=(784,), name="softmax_layer"),
], name="softmax_regression")
optimizer = keras.optimizers.SGD(learning_rate=0.001)


@tf.function
def train_step(x, y_):
    with tf.GradientTape() as tape:
        y = model(x, training=True)
        cross_entropy = -tf.reduce_sum(y_ * tf.math.log(y + 1e-8))
    grads = tape.gradient(cross_entropy, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return cross_entropy


for epoch in range(3):
    for step, (bx, by) in enumerate(dataset):
        loss = train_step(bx, by)
    print("epoch", epoch, "cross_entropy", float(loss))
