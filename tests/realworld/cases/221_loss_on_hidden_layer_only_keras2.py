"""Real-world case 221.

Source: https://stackoverflow.com/questions/51257037
Bug: while experimenting, the user made the model's loss depend only on the
hidden layer's activations (K.sum(hidden_a)) and not on the model output;
the output Dense layer then has no path to the loss and its kernel and bias
get no gradient (Keras errored "An operation has `None` for gradient" then,
tf_keras warns "Gradients do not exist for variables" today).
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
output = Dense(1)(hidden_a)

m3 = Model(input_1, output)
m3.add_loss(K.sum(hidden_a))
m3.compile(optimizer="adam")

x = np.random.random(size=(10, 5)).astype("float32")
y = np.random.random(size=(10, 1)).astype("float32")
m3.fit(x, y, epochs=1, verbose=0)
