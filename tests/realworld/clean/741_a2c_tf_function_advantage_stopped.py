"""Clean control 741 (expected clean).

The @tf.function A3C step of case 341 with the advantage computed from a stopped value
estimate; the value loss trains the critic head. A PPO-style clipped ratio term uses the
same stopped advantage.
Setting: Keras 3 subclassed model, shared trunk, separate heads, @tf.function.
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
def train_step(states, actions, returns, old_log_probs):
    with tf.GradientTape() as tape:
        logits, values = net(states)
        neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
        advantage = returns - tf.stop_gradient(values)
        ratio = tf.exp(-neg_log_prob - old_log_probs)
        clipped = tf.clip_by_value(ratio, 0.8, 1.2)
        policy_loss = -tf.reduce_mean(tf.minimum(ratio * advantage, clipped * advantage))
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
        np.log(np.full(8, 1 / 3, "float32")),
    )
