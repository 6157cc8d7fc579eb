"""Real-world case 418.

Source: https://github.com/tensorflow/tensorflow/issues/12473
Bug: "The gradient of scatter_nd_add always return None. If the gradient is
not implemented, it should raise an exception." A message-passing step sums
edge messages into per-node slots of an accumulator tf.Variable with
tf.compat.v1.scatter_nd_add and reads the accumulator back for the readout; a
scatter into a variable records no gradient, so the message network is
starved (the readout still trains) and Keras warns "Gradients do not exist".
Setting: small graph network, Keras 3 Sequential message and readout models,
eager custom loop.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
NODES, EDGES, F = 5, 12, 4
message_net = keras.Sequential([keras.Input((2 * F,)), keras.layers.Dense(F, activation="relu", name="msg")],
                               name="message_net")
readout = keras.Sequential([keras.Input((F,)), keras.layers.Dense(1, name="out")], name="readout")
aggregate = tf.Variable(tf.zeros((NODES, F)), trainable=False, name="aggregate")
optimizer = keras.optimizers.Adam(1e-2)

node_feats = np.random.randn(NODES, F).astype("float32")
senders = np.random.randint(0, NODES, EDGES)
receivers = np.random.randint(0, NODES, EDGES)
target = np.random.randn(NODES, 1).astype("float32")

for step in range(2):
    with tf.GradientTape() as tape:
        messages = message_net(np.concatenate([node_feats[senders], node_feats[receivers]], axis=1))
        aggregate.assign(tf.zeros((NODES, F)))
        tf.compat.v1.scatter_nd_add(aggregate, receivers[:, None], messages)
        pred = readout(aggregate.read_value())
        loss = tf.reduce_mean(tf.square(pred - target))
    variables = message_net.trainable_variables + readout.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print(step, float(loss))
