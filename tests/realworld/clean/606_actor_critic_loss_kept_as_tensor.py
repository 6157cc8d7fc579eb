"""Clean control 606 (expected clean).

The keras.io actor-critic update of case 206 with the total loss kept as a
tensor (actor_losses_sum + critic_losses_sum); float() is used only to log it,
so every gradient exists.
Setting: reinforcement learning (actor-critic), eager episode loop, toy env.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

seed, gamma, num_inputs, num_actions, num_hidden = 42, 0.99, 4, 2, 32
rng = np.random.default_rng(seed)
tf.random.set_seed(seed)
eps = np.finfo(np.float32).eps.item()

inputs = layers.Input(shape=(num_inputs,))
common = layers.Dense(num_hidden, activation="relu")(inputs)
action = layers.Dense(num_actions, activation="softmax")(common)
critic = layers.Dense(1)(common)
model = keras.Model(inputs=inputs, outputs=[action, critic])
optimizer = keras.optimizers.Adam(learning_rate=0.01)
huber_loss = keras.losses.Huber()


def env_step(state, action):
    next_state = state + 0.1 * rng.normal(size=num_inputs)
    return next_state, 1.0, bool(abs(next_state[0]) > 0.5)


action_probs_history, critic_value_history, rewards_history = [], [], []
state = rng.normal(scale=0.05, size=num_inputs)
with tf.GradientTape() as tape:
    for timestep in range(1, 12):
        state = tf.expand_dims(tf.convert_to_tensor(state, dtype=tf.float32), 0)
        action_probs, critic_value = model(state)
        critic_value_history.append(critic_value[0, 0])
        action = rng.choice(num_actions, p=np.squeeze(action_probs))
        action_probs_history.append(tf.math.log(action_probs[0, action]))
        state, reward, done = env_step(state.numpy()[0], action)
        rewards_history.append(reward)
        if done:
            break

    returns, discounted_sum = [], 0.0
    for r in rewards_history[::-1]:
        discounted_sum = r + gamma * discounted_sum
        returns.insert(0, discounted_sum)
    returns = np.array(returns)
    returns = ((returns - np.mean(returns)) / (np.std(returns) + eps)).tolist()

    actor_losses, critic_losses = [], []
    for log_prob, value, ret in zip(action_probs_history, critic_value_history, returns):
        diff = ret - value
        actor_losses.append(-log_prob * diff)
        critic_losses.append(huber_loss(tf.expand_dims(value, 0), tf.expand_dims(ret, 0)))
    actor_losses_sum = sum(actor_losses)
    critic_losses_sum = sum(critic_losses)
    loss_value = actor_losses_sum + critic_losses_sum
    print("episode loss:", float(loss_value))
grads = tape.gradient(loss_value, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
