"""Real-world case 589.

Source: https://github.com/muupan/async-rl/issues/12
Bug: the A3C loss computes the advantage as R - v from the value head of the
shared actor-critic network inside the tape and multiplies the log-probability
of the taken action by it without stopping the gradient. The policy loss then
also pulls on the value head and the shared trunk (it pushes v in the
direction that increases log pi * (R - v)), so the critic is trained by the
actor's objective as well as by its own regression loss. Nothing is None and
the loss is finite: training is silently biased.
Setting: subclassed Keras actor-critic model, eager custom training loop with
tf.GradientTape (n-step returns computed in NumPy).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class A3CFFSoftmax(keras.Model):
    def __init__(self, n_actions, hidden=64, **kwargs):
        super().__init__(**kwargs)
        self.trunk = layers.Dense(hidden, activation="relu")
        self.pi_head = layers.Dense(n_actions)
        self.v_head = layers.Dense(1)

    def call(self, states):
        h = self.trunk(states)
        return self.pi_head(h), tf.squeeze(self.v_head(h), axis=-1)


def discounted_returns(rewards, dones, bootstrap, gamma=0.99):
    R, out = bootstrap, np.zeros_like(rewards)
    for i in reversed(range(len(rewards))):
        R = rewards[i] + gamma * R * (1.0 - dones[i])
        out[i] = R
    return out


rng = np.random.default_rng(0)
n_actions, t_max, beta = 4, 32, 0.01
model = A3CFFSoftmax(n_actions)
optimizer = keras.optimizers.RMSprop(7e-4)

for update in range(3):
    states = rng.normal(size=(t_max, 8)).astype("float32")
    actions = rng.integers(0, n_actions, size=t_max)
    rewards = (actions == (states[:, 0] > 0)).astype("float32")
    dones = np.zeros(t_max, dtype="float32")
    R = discounted_returns(rewards, dones, bootstrap=0.0).astype("float32")

    with tf.GradientTape() as tape:
        logits, v = model(states)
        log_probs = tf.nn.log_softmax(logits)
        log_prob = tf.reduce_sum(log_probs * tf.one_hot(actions, n_actions), axis=1)
        entropy = -tf.reduce_sum(tf.exp(log_probs) * log_probs, axis=1)
        advantage = R - v
        pi_loss = -tf.reduce_mean(log_prob * advantage + beta * entropy)
        v_loss = 0.5 * tf.reduce_mean(tf.square(R - v))
        total_loss = pi_loss + 0.5 * v_loss
    grads = tape.gradient(total_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("update", update, "pi_loss", float(pi_loss), "v_loss", float(v_loss))
