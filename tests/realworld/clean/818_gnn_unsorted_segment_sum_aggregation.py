"""Clean control 818 (look-alike of case 418).

Source: https://github.com/tensorflow/tensorflow/issues/12473
The same message passing with tf.math.unsorted_segment_sum, a differentiable
scatter-add on tensors: the message network trains.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
NODES, EDGES, F = 5, 12, 4
message_net = keras.Sequential([keras.Input((2 * F,)), keras.layers.Dense(F, activation="relu", name="msg")],
                               name="message_net")
readout = keras.Sequential([keras.Input((F,)), keras.layers.Dense(1, name="out")], name="readout")
optimizer = keras.optimizers.Adam(1e-2)

node_feats = np.random.randn(NODES, F).astype("float32")
senders = np.random.randint(0, NODES, EDGES)
receivers = np.random.randint(0, NODES, EDGES)
target = np.random.randn(NODES, 1).astype("float32")

for step in range(2):
    with tf.GradientTape() as tape:
        messages = message_net(np.concatenate([node_feats[senders], node_feats[receivers]], axis=1))
        aggregate = tf.math.unsorted_segment_sum(messages, receivers, NODES)
        pred = readout(aggregate)
        loss = tf.reduce_mean(tf.square(pred - target))
    variables = message_net.trainable_variables + readout.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    print(step, float(loss))
