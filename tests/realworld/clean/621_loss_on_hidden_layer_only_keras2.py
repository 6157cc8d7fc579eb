"""Clean control 621 (expected clean).

Loss defined on the hidden layer only, as in the report, but with the output
layer frozen (trainable=False) as the accepted answer suggests: every
trainable variable (the hidden Dense layer) is used by the loss and gets a
gradient.
Setting: Keras 2 (tf_keras) functional model, loss on an intermediate tensor via add_loss(), model.fit().
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras
from tf_keras import backend as K
from tf_keras.layers import Dense, Input
from tf_keras.models import Model

tf.random.set_seed(0)
np.random.seed(0)

input_1 = Input((5,))
hidden_a = Dense(2)(input_1)
output = Dense(1, trainable=False)(hidden_a)

m3 = Model(input_1, output)
m3.add_loss(K.sum(hidden_a))
m3.compile(optimizer="adam")

x = np.random.random(size=(10, 5)).astype("float32")
y = np.random.random(size=(10, 1)).astype("float32")
m3.fit(x, y, epochs=1, verbose=0)
print("trained without gradient warnings")
