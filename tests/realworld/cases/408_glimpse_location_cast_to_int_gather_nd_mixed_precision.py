"""Real-world case 408.

Source: https://github.com/tensorflow/tensorflow/issues/27526
Bug: "tape.gradient can not pass through indices of tf.gather_nd and returns
None". A locator network predicts where to crop a glimpse; its output is cast
to int32 to index the image with tf.gather_nd. The cast and the integer
indices carry no gradient, so the locator gets none (the classifier on the
glimpse trains) and Keras warns "Gradients do not exist".
Setting: recurrent-attention style glimpse, Keras 3 Sequential models under the
mixed_float16 policy, eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
keras.utils.set_random_seed(0)
G = 4
locator = keras.Sequential([keras.Input((16, 16, 1)), keras.layers.Flatten(),
                            keras.layers.Dense(2, activation="sigmoid", name="loc")], name="locator")
classifier = keras.Sequential([keras.Input((G, G, 1)), keras.layers.Flatten(),
                               keras.layers.Dense(3, name="cls")], name="classifier")
optimizer = keras.optimizers.Adam(1e-3)

images = np.random.rand(8, 16, 16, 1).astype("float32")
labels = np.random.randint(0, 3, 8)
offsets = tf.stack(tf.meshgrid(tf.range(G), tf.range(G), indexing="ij"), axis=-1)

with tf.GradientTape() as tape:
    loc = locator(images)
    corner = tf.cast(loc * (16 - G), tf.int32)
    idx = corner[:, None, None, :] + offsets[None]
    glimpse = tf.gather_nd(images, idx, batch_dims=1)
    logits = tf.cast(classifier(glimpse), tf.float32)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
variables = locator.trainable_variables + classifier.trainable_variables
grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
print("loss", float(loss))
