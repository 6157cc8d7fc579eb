"""Real-world case 410.

Source: https://github.com/fchollet/deep-learning-with-python-notebooks/pull/284
Bug: the book's GradientTape example starts from `x = tf.zeros(...)`, a plain
tensor that the tape does not watch, so "the gradient computation returns
NoneType" (the pull request adds tape.watch). Here the same mistake in feature
visualisation: the starting image is tf.zeros and the gradient of a unit's
activation w.r.t. it is None.
Setting: Keras 3 CNN, gradient step in @tf.function (graph mode).
"""
import keras
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((8, 8, 1)),
    keras.layers.Conv2D(4, 3, activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
])


@tf.function
def ascent_step(image):
    with tf.GradientTape() as tape:
        activation = tf.reduce_mean(model(image)[:, 2])
    return tape.gradient(activation, image)


image = tf.zeros((1, 8, 8, 1))
grad = ascent_step(image)
print("grad:", grad)
