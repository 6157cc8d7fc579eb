"""Real-world case 207.

Source: https://github.com/SciSharp/TensorFlow.NET/issues/1197
Bug: an actor-critic agent with separate actor and critic networks (one
optimizer and one GradientTape each) gets the action probabilities and the
state value with model.predict() inside the tapes, because there is no target
for model.fit; predict returns NumPy arrays outside the graph, so both the
actor's and the critic's gradients are always null.
(Reproduced here with the Python/Keras API the project was ported from.)
Setting: reinforcement learning (actor-critic), eager episode loop, toy env.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
tf.random.set_seed(0)
num_inputs, num_actions, gamma = 4, 2, 0.99
actor = keras.Sequential([keras.Input((num_inputs,)), layers.Dense(32, activation="relu"),
                          layers.Dense(num_actions, activation="softmax")], name="actor")
critic = keras.Sequential([keras.Input((num_inputs,)), layers.Dense(32, activation="relu"),
                           layers.Dense(1)], name="critic")
huber = keras.losses.Huber(reduction="sum")
optimizer_actor = keras.optimizers.Adam(learning_rate=1e-4)
optimizer_critic = keras.optimizers.Adam(learning_rate=1e-4)

action_probs_history, critic_value_history, rewards_history = [], [], []
state = rng.normal(scale=0.05, size=(1, num_inputs)).astype("float32")
with tf.GradientTape() as tape_ac, tf.GradientTape() as tape_cc:
    for timestep in range(8):
        action_probs = actor.predict(state, verbose=0)
        critic_value = critic.predict(state, verbose=0)
        critic_value_history.append(critic_value[0, 0])
        action = rng.choice(num_actions, p=np.squeeze(action_probs))
        action_probs_history.append(np.log(action_probs[0, action]))
        state = (state + 0.1 * rng.normal(size=state.shape)).astype("float32")
        rewards_history.append(1.0)

    returns = np.cumsum(np.array(rewards_history)[::-1] * gamma)[::-1].astype("float32")
    values = tf.convert_to_tensor(critic_value_history)
    log_probs = tf.convert_to_tensor(action_probs_history)
    actor_loss = -tf.reduce_sum(log_probs * (returns - values))
    critic_loss = huber(returns, values)
grads_actor = tape_ac.gradient(actor_loss, actor.trainable_variables)
grads_critic = tape_cc.gradient(critic_loss, critic.trainable_variables)
print("actor gradients:", grads_actor)
print("critic gradients:", grads_critic)
