"""Real-world case 341.

Source: https://github.com/coreylynch/async-rl/issues/8
Bug: "Stop actor gradient flowing through the critic": the A3C policy loss multiplies the
log-probability by (R - V) with V not stopped; "after some training the policy tends to use
one action exclusively".
Setting: Keras 3 subclassed model with a shared trunk and separate policy/value heads,
@tf.function train step, advantage inline in the policy loss.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)


class A3CNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(32, activation="tanh")
        self.pi = keras.layers.Dense(3)
        self.v = keras.layers.Dense(1)

    def call(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h)[:, 0]


net = A3CNet()
optimizer = keras.optimizers.RMSprop(7e-4)


@tf.function
def train_step(states, actions, returns):
    with tf.GradientTape() as tape:
        logits, values = net(states)
        neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
        policy_loss = tf.reduce_mean(neg_log_prob * (returns - values))
        value_loss = tf.reduce_mean(tf.square(returns - values))
        loss = policy_loss + 0.5 * value_loss
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return loss


for _ in range(2):
    train_step(
        np.random.rand(8, 5).astype("float32"),
        np.random.randint(0, 3, size=8),
        np.random.rand(8).astype("float32"),
    )
