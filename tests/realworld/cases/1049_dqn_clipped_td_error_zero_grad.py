"""Real-world case 1049.

Source: https://github.com/spragunr/deep_q_rl/issues/46
Bug: following the DQN paper's "clip the error term to [-1, 1]", the Q
network clips the TD error itself (`diff = clip(diff, -1, 1)`) before
squaring it. Clipping has zero derivative outside the interval, so exactly
when the error is large the gradient vanishes; with unscaled game rewards
every TD error is beyond the clip and all the Q network's gradients are zero.
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
            if self.clip_delta > 0:
                diff = ops.clip(diff, -self.clip_delta, self.clip_delta)
            loss = ops.mean(0.5 * ops.square(diff))
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
