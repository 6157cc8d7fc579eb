"""Real-world case 1051.

Source: https://github.com/jxyyjm/tensorflow_test/issues/3
Bug: a softmax-regression MNIST script computes the cross entropy by hand,
`-tf.reduce_sum(y_ * tf.log(y))`, on the softmax output. With unscaled pixel
inputs the logits are large, softmax underflows to exact 0 for some classes,
log(0) is -inf and 0 * -inf makes the loss NaN on the very first step.
Setting: tf_keras (Keras 2) model, tf.function custom training step.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(3)
x_train = rng.integers(0, 256, size=(256, 784)).astype("float32")  # raw pixels, not scaled
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
        cross_entropy = -tf.reduce_sum(y_ * tf.math.log(y))
    grads = tape.gradient(cross_entropy, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return cross_entropy


for epoch in range(3):
    for step, (bx, by) in enumerate(dataset):
        loss = train_step(bx, by)
    print("epoch", epoch, "cross_entropy", float(loss))
