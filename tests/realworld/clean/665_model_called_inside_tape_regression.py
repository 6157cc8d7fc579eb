"""Clean control 665 (look-alike of case 265).

Source: https://github.com/tensorflow/tensorflow/issues/20630
The same regression with the model called directly (`model(x)`) inside the
tape, so the prediction stays a tensor and the Dense weights get gradients.
Setting: Keras 3 subclassed model, eager GradientTape training loop.
"""
import keras
import tensorflow as tf

tf.random.set_seed(0)
n = 10
x = tf.random.normal([n, 2])
noise = tf.random.normal([n, 2])
y = x * 3 + 2 + noise


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense1 = keras.layers.Dense(units=1)

    def call(self, inputs):
        return self.dense1(inputs)


model = Model()
optimizer = keras.optimizers.SGD(learning_rate=0.01)
for i in range(3):
    with tf.GradientTape() as tape:
        error = model(x) - y
        loss_value = tf.reduce_mean(tf.square(error))
    grads = tape.gradient(loss_value, model.trainable_variables)
    assert all(g is not None for g in grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
