"""Clean control 730 (look-alike of case 330).

Source: https://github.com/tensorlayer/TensorLayer/issues/1071
The tutorial as written: V(s') is computed before the tape opens, so the TD target
r + LAM * V(s') is a constant for the critic's update (semi-gradient TD(0)).
"""
import keras
import numpy as np
import tensorflow as tf

LAM = 0.9
keras.utils.set_random_seed(0)


class Critic:
    def __init__(self, state_dim, lr=0.01):
        self.model = keras.Sequential(
            [keras.Input((state_dim,)), keras.layers.Dense(30, activation="relu"), keras.layers.Dense(1)]
        )
        self.optimizer = keras.optimizers.Adam(lr)

    def learn(self, state, reward, state_):
        v_ = self.model(np.array([state_]))
        with tf.GradientTape() as tape:
            v = self.model(np.array([state]))
            td_error = reward + LAM * v_ - v
            loss = tf.square(td_error)
        grad = tape.gradient(loss, self.model.trainable_weights)
        self.optimizer.apply_gradients(zip(grad, self.model.trainable_weights))
        return td_error


critic = Critic(state_dim=4)
state = np.random.randn(4).astype("float32")
for t in range(5):
    next_state = np.random.randn(4).astype("float32")
    critic.learn(state, 1.0, next_state)
    state = next_state
