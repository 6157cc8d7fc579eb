"""Real-world case 291.

Source: https://github.com/keras-team/keras/issues/15716
Bug: a tabular regression model sends its hidden features through a PReLU and
then tf.math.ceil to get whole-number "bucket" features, concatenated with the
raw hidden features before the output layer. Ceil has no gradient (the
maintainer: "We don't expect the gradients to go over it"), so the only path
to the PReLU slope is cut: "Gradients do not exist for variables
['p_re_lu/alpha:0'] when minimizing the loss", while the Dense layers, which
also reach the loss through the raw branch, still train.
Setting: Keras 2 (tf_keras) functional model with a TF-op (TFOpLambda) layer,
model.fit with a built-in loss.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)

features = keras.Input(shape=(6,), name="features")
hidden = keras.layers.Dense(8, name="hidden")(features)
activated = keras.layers.PReLU(name="p_re_lu")(hidden)
buckets = tf.math.ceil(activated)
merged = keras.layers.Concatenate(name="merge")([hidden, buckets])
price = keras.layers.Dense(1, name="price")(merged)
model = keras.Model(features, price)
model.compile(optimizer="adam", loss="mse")

x = np.random.rand(64, 6).astype("float32") * 4
y = x.sum(axis=1, keepdims=True)
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
