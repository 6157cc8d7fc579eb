"""Clean control 810 (look-alike of case 410).

Source: https://github.com/fchollet/deep-learning-with-python-notebooks/pull/284
The same ascent step with tape.watch(image) (the pull request's fix); the
starting image is a small random tensor so the ReLU units are not all dead.
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
        tape.watch(image)
        activation = tf.reduce_mean(model(image)[:, 2])
    return tape.gradient(activation, image)


image = tf.random.uniform((1, 8, 8, 1), seed=1)
grad = ascent_step(image)
print("grad:", grad.shape)
