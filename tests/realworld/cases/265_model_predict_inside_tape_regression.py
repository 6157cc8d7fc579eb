"""Real-world case 265.

Source: https://github.com/tensorflow/tensorflow/issues/20630
Bug: porting the eager-guide linear regression to a Keras model, the loss
uses `model.predict(x)`, which returns a NumPy array: the prediction leaves
TensorFlow inside the tape, so the gradients are None ("use model(x) instead
of model.predict(x)", as the maintainer answered).
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
        error = model.predict(x, verbose=0) - y
        loss_value = tf.reduce_mean(tf.square(error))
    grads = tape.gradient(loss_value, model.trainable_variables)
    print("loss:", float(loss_value), "grads:", grads)
