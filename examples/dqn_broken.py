"""A DQN-style Keras model whose train_step takes argmin of the Q-values inside the tape.

This is the classic bug gradcheck exists for: the loss is built from an action *index*
(an integer), so no gradient reaches any weight, and Keras 3 stops with

    ValueError: No gradients provided for any variable.

naming no variable, op or line. Run it plainly to see that error, or under gradcheck to
see why (`gradcheck examples/dqn_broken.py`). The fixed reference is examples/dqn_fixed.py.
"""

import keras
import numpy as np
import tensorflow as tf

NUM_ACTIONS = 4
STATE_DIM = 8


class QNetwork(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu", name="hidden")
        self.q_head = keras.layers.Dense(NUM_ACTIONS, name="q_values")
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, states):
        return self.q_head(self.hidden(states))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            metric = tf.math.argmin(y_pred, axis=1)
            loss = keras.losses.mean_squared_error(y, metric)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    states = rng.normal(size=(256, STATE_DIM)).astype("float32")
    targets = rng.integers(0, NUM_ACTIONS, size=(256,)).astype("float32")
    model = QNetwork()
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    model.fit(states, targets, epochs=3, batch_size=32, verbose=2)
