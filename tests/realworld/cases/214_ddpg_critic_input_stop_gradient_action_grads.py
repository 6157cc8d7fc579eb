"""Real-world case 214.

Source: https://github.com/MorvanZhou/Reinforcement-learning-with-tensorflow/pull/125
Bug: the DDPG critic is built on `self.a = tf.stop_gradient(a)` ("stop critic
update flows to actor") but the action gradient is taken with respect to the
actor's output `a` itself: dQ/da goes through the stop_gradient and is always
None, so the policy gradient dQ/da * da/dtheta silently degrades to da/dtheta
and the actor does not learn ("the gradient will always be None"; the fix
differentiates with respect to self.a).
Setting: reinforcement learning (DDPG, Pendulum-like toy batch), Keras 3
networks, @tf.function learn step.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

np.random.seed(1)
tf.random.set_seed(1)
s_dim, a_dim, a_bound, gamma = 3, 1, 2.0, 0.9

s_in = keras.Input((s_dim,))
actor = keras.Model(s_in, a_bound * layers.Dense(a_dim, activation="tanh")(layers.Dense(30, activation="relu")(s_in)),
                    name="actor")
cs_in, ca_in = keras.Input((s_dim,)), keras.Input((a_dim,))
critic = keras.Model([cs_in, ca_in],
                     layers.Dense(1)(layers.Dense(30, activation="relu")(layers.Concatenate()([cs_in, ca_in]))),
                     name="critic")
actor_optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def actor_learn(s):
    with tf.GradientTape(persistent=True) as tape:
        a = actor(s)
        critic_a = tf.stop_gradient(a)    # stop critic update flows to actor
        q = critic([s, critic_a])
    a_grads = tape.gradient(q, a)   # dQ/da for each sample
    policy_grads = tape.gradient(a, actor.trainable_variables, output_gradients=a_grads)
    actor_optimizer.apply_gradients(zip([-g for g in policy_grads], actor.trainable_variables))  # ascent
    return a_grads


batch_s = np.random.uniform(-1, 1, size=(32, s_dim)).astype("float32")
print("dQ/da:", actor_learn(batch_s))
