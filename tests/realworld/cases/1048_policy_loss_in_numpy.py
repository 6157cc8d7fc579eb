"""Real-world case 1048.

Source: https://github.com/keras-team/keras/issues/9142
Bug: a REINFORCE agent with two action heads computes its policy-gradient
loss with NumPy (`np.sum`, `np.log`) on the model's probabilities and turns
the result back into a tensor (the original wrapped it in `K.constant`). The
NumPy calls pull the values out of TensorFlow, the loss is a constant, and
the optimizer gets no gradient for any weight.
Setting: Keras 3 multi-output policy model, custom GradientTape update inside an agent class.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

STATE_DIM, N_ARG1, N_ARG2 = 8, 4, 3


class Agent:
    def __init__(self):
        state = keras.Input(shape=(STATE_DIM,))
        h = layers.Dense(32, activation="relu", name="shared")(state)
        arg1 = layers.Dense(N_ARG1, activation="softmax", name="arg1")(h)
        arg2 = layers.Dense(N_ARG2, activation="softmax", name="arg2")(h)
        self.model = keras.Model(state, [arg1, arg2], name="policy")
        self.optimizer = keras.optimizers.Adam(1e-3)

    def act(self, state):
        p1, p2 = self.model.predict(state, verbose=0)
        a1 = np.array([np.random.choice(N_ARG1, p=p / p.sum()) for p in p1])
        a2 = np.array([np.random.choice(N_ARG2, p=p / p.sum()) for p in p2])
        return a1, a2

    def fit(self, state, chose_arg1, chose_arg2, reward):
        a1 = np.eye(N_ARG1, dtype="float32")[chose_arg1]
        a2 = np.eye(N_ARG2, dtype="float32")[chose_arg2]
        with tf.GradientTape() as tape:
            arg1_probs, arg2_probs = self.model(state, training=True)
            chosen = np.sum(arg1_probs * a1, axis=1) * np.sum(arg2_probs * a2, axis=1)
            loss = -np.mean(np.log(chosen) * reward)
            loss = keras.ops.convert_to_tensor(loss, dtype="float32")
        grads = tape.gradient(loss, self.model.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_weights))
        return float(loss)


agent = Agent()
rng = np.random.default_rng(0)
for episode in range(3):
    states = rng.normal(size=(16, STATE_DIM)).astype("float32")
    chose_arg1, chose_arg2 = agent.act(states)
    reward = rng.normal(size=16).astype("float32")
    print("episode", episode, "loss", agent.fit(states, chose_arg1, chose_arg2, reward))
