"""Real-world case 558.

Source: https://github.com/keras-team/keras-io/issues/194
Bug: the Keras actor-critic (CartPole) example builds the actor loss as
-log_prob * (ret - value) where value is the critic head's output of the same
model, computed inside the tape. Without tf.stop_gradient the advantage is a
function of the trained network, so the policy loss also pushes the critic
(and the shared trunk) to inflate the value estimate: the gradient is not the
policy gradient. The reporter measured much slower training; the fix is
diff = ret - tf.stop_gradient(value).
Setting: reinforcement learning (actor-critic with an advantage), eager custom loop, toy env.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

num_inputs, num_actions, num_hidden = 4, 2, 64
gamma, eps = 0.99, np.finfo(np.float32).eps.item()

inputs = layers.Input(shape=(num_inputs,))
common = layers.Dense(num_hidden, activation="relu")(inputs)
action = layers.Dense(num_actions, activation="softmax")(common)
critic = layers.Dense(1)(common)
model = keras.Model(inputs=inputs, outputs=[action, critic])

optimizer = keras.optimizers.Adam(learning_rate=0.01)
huber_loss = keras.losses.Huber()
rng = np.random.default_rng(0)


def env_step(state, action):
    reward = 1.0 if (action == 1) == (state[2] > 0) else 0.0
    return rng.normal(size=num_inputs).astype("float32"), reward


for episode in range(3):
    state = rng.normal(size=num_inputs).astype("float32")
    action_probs_history, critic_value_history, rewards_history = [], [], []
    with tf.GradientTape() as tape:
        for timestep in range(20):
            state_t = tf.expand_dims(tf.convert_to_tensor(state), 0)
            action_probs, critic_value = model(state_t)
            critic_value_history.append(critic_value[0, 0])
            a = rng.choice(num_actions, p=np.squeeze(action_probs))
            action_probs_history.append(tf.math.log(action_probs[0, a]))
            state, reward = env_step(state, a)
            rewards_history.append(reward)

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
            critic_losses.append(huber_loss(tf.expand_dims(ret, 0), tf.expand_dims(value, 0)))
        loss_value = sum(actor_losses) + sum(critic_losses)
    grads = tape.gradient(loss_value, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("episode", episode, "loss", float(loss_value))
