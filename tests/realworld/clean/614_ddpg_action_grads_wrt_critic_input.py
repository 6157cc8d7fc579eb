"""Clean control 614 (expected clean).

The DDPG actor step of case 214 as fixed upstream: the critic still reads
tf.stop_gradient(a) so its update cannot flow into the actor, and dQ/da is
taken with respect to that stopped input (watched on the tape, which
tf.gradients did not need); the policy gradient dQ/da * da/dtheta then reaches
every actor weight.
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
        tape.watch(critic_a)
        q = critic([s, critic_a])
    a_grads = tape.gradient(q, critic_a)   # dQ/da for each sample, w.r.t. the critic's input
    policy_grads = tape.gradient(a, actor.trainable_variables, output_gradients=a_grads)
    actor_optimizer.apply_gradients(zip([-g for g in policy_grads], actor.trainable_variables))  # ascent
    return a_grads


batch_s = np.random.uniform(-1, 1, size=(32, s_dim)).astype("float32")
print("mean |dQ/da|:", float(tf.reduce_mean(tf.abs(actor_learn(batch_s)))))
