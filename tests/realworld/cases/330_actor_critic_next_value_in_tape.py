"""Real-world case 330.

Source: https://github.com/tensorlayer/TensorLayer/issues/1071
Bug: the one-step actor-critic tutorial learns the critic from the TD error
r + LAM * V(s') - V(s); "when I place v_ = self.model(np.array([state_])) in the with
context, the model is not convergent". The maintainer: "The 'v_' is target value, which is
not supposed to be optimized." Inside the tape the gradient also flows through V(s'), which
turns TD(0) into a residual-gradient update.
Setting: Keras 3 Sequential critic, eager custom loop over single transitions, the
tutorial's learn() method with V(s') moved into the tape.
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
        with tf.GradientTape() as tape:
            v_ = self.model(np.array([state_]))
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
