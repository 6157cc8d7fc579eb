# ruff: noqa: B905
"""Our own smoke program: an advantage actor-critic update with separate actor and critic
networks, eager, on a batch of made-up transitions."""

import keras
import numpy as np
import tensorflow as tf

num_actions = 2
actor = keras.Sequential(
    [
        keras.Input((4,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(num_actions, activation="softmax"),
    ]
)
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
actor_opt = keras.optimizers.Adam(1e-3)
critic_opt = keras.optimizers.Adam(1e-3)

rng = np.random.default_rng(4)
states = rng.normal(size=(16, 4)).astype("float32")
actions = rng.integers(0, num_actions, size=16)
returns = rng.normal(size=(16, 1)).astype("float32")

for it in range(3):
    with tf.GradientTape() as actor_tape, tf.GradientTape() as critic_tape:
        probs = actor(states)
        values = critic(states)
        advantage = tf.stop_gradient(returns - values)
        taken = tf.reduce_sum(probs * tf.one_hot(actions, num_actions), axis=1, keepdims=True)
        actor_loss = -tf.reduce_mean(tf.math.log(taken + 1e-8) * advantage)
        critic_loss = tf.reduce_mean(tf.square(returns - values))
    actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
    critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))
    critic_opt.apply_gradients(zip(critic_grads, critic.trainable_variables))
    print(it, float(actor_loss), float(critic_loss))
