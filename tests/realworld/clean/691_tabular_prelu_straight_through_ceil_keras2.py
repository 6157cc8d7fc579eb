"""Clean control 691 (look-alike of case 291).

Source: https://github.com/keras-team/keras/issues/15716
The same tabular model with a straight-through ceil: the forward pass still
uses the whole-number buckets, but the backward pass treats the rounding as
the identity (x + stop_gradient(ceil(x) - x)), so the PReLU slope trains with
every other variable.
Setting: Keras 2 (tf_keras) functional model with TF-op (TFOpLambda) layers,
model.fit with a built-in loss.
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

tf.random.set_seed(0)

features = keras.Input(shape=(6,), name="features")
hidden = keras.layers.Dense(8, name="hidden")(features)
activated = keras.layers.PReLU(name="p_re_lu")(hidden)
buckets = activated + tf.stop_gradient(tf.math.ceil(activated) - activated)
merged = keras.layers.Concatenate(name="merge")([hidden, buckets])
price = keras.layers.Dense(1, name="price")(merged)
model = keras.Model(features, price)
model.compile(optimizer="adam", loss="mse")

x = np.random.rand(64, 6).astype("float32") * 4
y = x.sum(axis=1, keepdims=True)
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
print("loss:", history.history["loss"])
