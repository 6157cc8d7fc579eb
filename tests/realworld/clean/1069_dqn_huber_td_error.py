"""Real-world control 1069 (twin of case 1049).

Source: https://github.com/spragunr/deep_q_rl/issues/46
Fixed: the error is "clipped" the way the DQN paper means it: the loss is
quadratic inside [-delta, delta] and linear outside (Huber form), so large
TD errors keep a gradient of magnitude delta instead of zero.
Setting: Keras 3 subclassed model with a custom train_step written in keras.ops, fit().
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

STATE_DIM, N_ACTIONS, GAMMA = 6, 4, 0.99


class QNetwork(keras.Model):
    def __init__(self, clip_delta=1.0):
        super().__init__()
        self.clip_delta = clip_delta
        self.hidden = layers.Dense(32, activation="relu")
        self.q_out = layers.Dense(N_ACTIONS)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, states):
        return self.q_out(self.hidden(states))

    def train_step(self, data):
        (states, actions), targets = data
        with tf.GradientTape() as tape:
            q_all = self(states, training=True)
            q = ops.sum(q_all * ops.one_hot(actions, N_ACTIONS), axis=1)
            diff = targets - q
            quadratic_part = ops.minimum(ops.abs(diff), self.clip_delta)
            linear_part = ops.abs(diff) - quadratic_part
            loss = ops.mean(0.5 * ops.square(quadratic_part) + self.clip_delta * linear_part)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


rng = np.random.default_rng(0)
n = 128
states = rng.normal(size=(n, STATE_DIM)).astype("float32")
actions = rng.integers(0, N_ACTIONS, size=n).astype("int32")
rewards = rng.uniform(10.0, 30.0, size=n).astype("float32")  # raw game score, not clipped
next_states = rng.normal(size=(n, STATE_DIM)).astype("float32")

q_net = QNetwork()
target_net = QNetwork()
q_net(states[:1])
target_net(states[:1])
target_net.set_weights(q_net.get_weights())
targets = rewards + GAMMA * np.max(target_net.predict(next_states, verbose=0), axis=1)

q_net.compile(optimizer=keras.optimizers.RMSprop(2.5e-4))
q_net.fit((states, actions), targets.astype("float32"), batch_size=32, epochs=3, verbose=2)
