"""Real-world case 478.

Source: https://github.com/danaugrs/huskarl/issues/9
Bug: adapting huskarl's DDPG to CartPole's discrete actions, the reporter's "main change is
to tf.argmax(actor_action)" -- and then to "avoid [the] 'No gradient' issue". Turning the
actor's output into the index of the best action (one-hot encoded for the critic) inside
the actor's update cuts the deterministic policy gradient: argmax has no gradient, the
critic's action input no longer depends on the actor's variables, and Keras raises "No
gradients provided for any variable".
Setting: Keras 3 functional actor (softmax over 2 actions) and critic, agent class with
@tf.function critic and actor updates, replay mini-batches.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
STATE_DIM, N_ACTIONS, GAMMA, BATCH = 4, 2, 0.9, 32


def build_actor():
    state = keras.Input((STATE_DIM,))
    h = keras.layers.Dense(16, activation="relu")(state)
    return keras.Model(state, keras.layers.Dense(N_ACTIONS, activation="softmax")(h), name="actor")


def build_critic():
    state = keras.Input((STATE_DIM,))
    action = keras.Input((N_ACTIONS,))
    h = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()([state, action]))
    return keras.Model([state, action], keras.layers.Dense(1)(h), name="critic")


class DDPG:
    def __init__(self):
        self.actor, self.critic = build_actor(), build_critic()
        self.optimizer_actor = keras.optimizers.Adam(5e-3)
        self.optimizer_critic = keras.optimizers.Adam(5e-3)

    def discrete(self, actor_action):
        return tf.one_hot(tf.argmax(actor_action, axis=-1), N_ACTIONS)

    @tf.function
    def train_critic(self, state, action, reward, next_state, done):
        next_action = self.discrete(self.actor(next_state))
        target = reward + GAMMA * (1.0 - done) * self.critic([next_state, next_action])[:, 0]
        with tf.GradientTape() as tape:
            q = self.critic([state, action])[:, 0]
            loss = tf.reduce_mean(tf.square(tf.stop_gradient(target) - q))
        grads = tape.gradient(loss, self.critic.trainable_variables)
        self.optimizer_critic.apply_gradients(zip(grads, self.critic.trainable_variables))

    @tf.function
    def train_actor(self, state):
        with tf.GradientTape() as tape:
            actor_action = self.discrete(self.actor(state))
            loss = -tf.reduce_mean(self.critic([state, actor_action]))
        grads = tape.gradient(loss, self.actor.trainable_variables)
        self.optimizer_actor.apply_gradients(zip(grads, self.actor.trainable_variables))


agent = DDPG()
for step in range(3):
    state = tf.random.normal((BATCH, STATE_DIM))
    action = tf.one_hot(tf.random.uniform((BATCH,), 0, N_ACTIONS, tf.int32), N_ACTIONS)
    reward = tf.ones((BATCH,))
    done = tf.cast(tf.random.uniform((BATCH,)) < 0.1, tf.float32)
    agent.train_critic(state, action, reward, tf.random.normal((BATCH, STATE_DIM)), done)
    agent.train_actor(state)
