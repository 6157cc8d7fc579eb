"""Clean twin of case 557.

Source: https://github.com/SciSharp/TensorFlow.NET/issues/1197
Fix: call the policy network directly inside the tape (policy(states,
training=True)) instead of policy.predict(), so the probabilities are a
recorded function of the weights and the REINFORCE gradient exists.
Setting: reinforcement learning (REINFORCE), eager custom loop, toy env.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

obs_dim, n_actions, gamma = 6, 3, 0.97
policy = keras.Sequential(
    [
        keras.Input(shape=(obs_dim,)),
        layers.Dense(32, activation="relu"),
        layers.Dense(32, activation="relu"),
        layers.Dense(n_actions, activation="softmax"),
    ],
    name="policy",
)
optimizer = keras.optimizers.Adam(learning_rate=1e-2)
rng = np.random.default_rng(0)


def run_episode(length=16):
    states, actions, rewards = [], [], []
    state = rng.normal(size=obs_dim).astype("float32")
    for _ in range(length):
        probs = policy(state[None, :]).numpy()[0]
        action = rng.choice(n_actions, p=probs / probs.sum())
        states.append(state)
        actions.append(action)
        rewards.append(1.0 if action == int(state[0] > 0) else 0.0)
        state = rng.normal(size=obs_dim).astype("float32")
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.insert(0, g)
    returns = np.array(returns, dtype="float32")
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    return np.array(states), np.array(actions), returns


for episode in range(3):
    states, actions, returns = run_episode()
    with tf.GradientTape() as tape:
        probs = policy(states, training=True)
        taken = tf.reduce_sum(probs * tf.one_hot(actions, n_actions), axis=1)
        loss = -tf.reduce_mean(tf.math.log(taken + 1e-8) * returns)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    print("episode", episode, "loss", float(loss))
