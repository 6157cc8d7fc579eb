"""Real-world case 471.

Source: https://github.com/floodsung/DDPG/issues/14
Bug: "Why don't you use action_batch to compute gradient?" -- the reporter, writing his own
DDPG, scores the actor with the critic evaluated on the actions stored in the replay buffer
instead of the actor's own actions mu(s) ("I didn't manage to get any agent working"). The
critic's input action is then data, the actor is never called inside the tape, and none of
its variables gets a gradient: tf.keras raises "No gradients provided for any variable".
Setting: tf.keras (Keras 2) functional actor and critic, eager custom training loop with two
tapes per update, numpy replay buffer.
"""
import numpy as np
import tensorflow as tf

np.random.seed(0)
tf.random.set_seed(0)
STATE_DIM, ACTION_DIM, BATCH, GAMMA = 3, 1, 32, 0.99


def build_actor():
    state = tf.keras.Input((STATE_DIM,))
    h = tf.keras.layers.Dense(64, activation="relu")(state)
    action = tf.keras.layers.Dense(ACTION_DIM, activation="tanh")(h)
    return tf.keras.Model(state, action)


def build_critic():
    state = tf.keras.Input((STATE_DIM,))
    action = tf.keras.Input((ACTION_DIM,))
    h = tf.keras.layers.Concatenate()([state, action])
    h = tf.keras.layers.Dense(64, activation="relu")(h)
    q = tf.keras.layers.Dense(1)(h)
    return tf.keras.Model([state, action], q)


actor, critic = build_actor(), build_critic()
target_actor, target_critic = build_actor(), build_critic()
target_actor.set_weights(actor.get_weights())
target_critic.set_weights(critic.get_weights())
actor_optimizer = tf.keras.optimizers.Adam(1e-4)
critic_optimizer = tf.keras.optimizers.Adam(1e-3)


def train(state_batch, action_batch, reward_batch, next_state_batch):
    target_q = target_critic([next_state_batch, target_actor(next_state_batch)])
    y_batch = reward_batch + GAMMA * target_q
    with tf.GradientTape() as tape:
        q = critic([state_batch, action_batch])
        critic_loss = tf.reduce_mean(tf.square(y_batch - q))
    critic_grads = tape.gradient(critic_loss, critic.trainable_variables)
    critic_optimizer.apply_gradients(zip(critic_grads, critic.trainable_variables))

    with tf.GradientTape() as tape:
        q = critic([state_batch, action_batch])
        actor_loss = -tf.reduce_mean(q)
    actor_grads = tape.gradient(actor_loss, actor.trainable_variables)
    actor_optimizer.apply_gradients(zip(actor_grads, actor.trainable_variables))


replay_states = np.random.randn(500, STATE_DIM).astype("float32")
replay_actions = np.random.uniform(-1, 1, (500, ACTION_DIM)).astype("float32")
replay_rewards = np.random.randn(500, 1).astype("float32")
replay_next_states = np.random.randn(500, STATE_DIM).astype("float32")
for step in range(3):
    idx = np.random.randint(0, 500, BATCH)
    batch = [replay_states[idx], replay_actions[idx], replay_rewards[idx], replay_next_states[idx]]
    train(*[tf.constant(b) for b in batch])
