"""Real-world control 1068 (twin of case 1048).

Source: https://github.com/keras-team/keras/issues/9142
Fixed: the policy-gradient loss is written with keras.ops (`ops.sum`,
`ops.log`, `ops.mean`) on the model's output tensors, so it stays inside
TensorFlow and every weight gets a gradient.
Setting: Keras 3 multi-output policy model, custom GradientTape update inside an agent class.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

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
            chosen = ops.sum(arg1_probs * a1, axis=1) * ops.sum(arg2_probs * a2, axis=1)
            loss = -ops.mean(ops.log(chosen) * reward)
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
