"""Clean control 992 (expected clean).

Source: https://github.com/MorvanZhou/Reinforcement-learning-with-tensorflow/pull/124 (fixed form)
The DDPG actor update evaluates the critic on the actor's own actions,
-Q(s, actor(s)), so the deterministic policy gradient flows through the critic
into every actor weight; the critic is updated on the replay-buffer actions
with its TD target built from the target networks outside the tape.
Setting: Keras 3 subclassed agent model with a custom train_step (critic and
actor updates), model.fit() on replay-buffer transitions.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

S_DIM, A_DIM, A_BOUND, GAMMA = 3, 1, 2.0, 0.9


def build_actor(name):
    s = keras.Input((S_DIM,))
    net = layers.Dense(30, activation="relu", name=name + "_l1")(s)
    a = layers.Dense(A_DIM, activation="tanh", name=name + "_a")(net)
    return keras.Model(s, a * A_BOUND, name=name)


def build_critic(name):
    s, a = keras.Input((S_DIM,)), keras.Input((A_DIM,))
    net = layers.Dense(30, activation="relu", name=name + "_l1")(layers.Concatenate()([s, a]))
    return keras.Model([s, a], layers.Dense(1, name=name + "_q")(net), name=name)


class DDPG(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.actor, self.actor_target = build_actor("actor"), build_actor("actor_target")
        self.critic, self.critic_target = build_critic("critic"), build_critic("critic_target")
        self.actor_target.set_weights(self.actor.get_weights())
        self.critic_target.set_weights(self.critic.get_weights())

    def compile(self, a_optimizer, c_optimizer):
        super().compile()
        self.a_optimizer, self.c_optimizer = a_optimizer, c_optimizer

    def train_step(self, data):
        s, a, r, s_ = keras.utils.unpack_x_y_sample_weight(data)[0]
        q_target = r + GAMMA * self.critic_target([s_, self.actor_target(s_)])
        with tf.GradientTape() as tape:
            q = self.critic([s, a])
            td_error = tf.reduce_mean(tf.square(q_target - q))
        c_grads = tape.gradient(td_error, self.critic.trainable_variables)
        self.c_optimizer.apply_gradients(zip(c_grads, self.critic.trainable_variables))

        with tf.GradientTape() as tape:
            a_pred = self.actor(s)
            q = self.critic([s, a_pred])
            a_loss = -tf.reduce_mean(q)
        a_grads = tape.gradient(a_loss, self.actor.trainable_variables)
        self.a_optimizer.apply_gradients(zip(a_grads, self.actor.trainable_variables))
        return {"td_error": td_error, "a_loss": a_loss}


rng = np.random.default_rng(0)
n = 512
bs = rng.normal(size=(n, S_DIM)).astype("float32")
ba = rng.uniform(-A_BOUND, A_BOUND, size=(n, A_DIM)).astype("float32")
br = (-(bs[:, :1] ** 2) - 0.1 * ba ** 2).astype("float32")
bs_ = (bs + 0.05 * rng.normal(size=(n, S_DIM))).astype("float32")

agent = DDPG()
agent.compile(a_optimizer=keras.optimizers.Adam(1e-3), c_optimizer=keras.optimizers.Adam(2e-3))
agent.fit((bs, ba, br, bs_), batch_size=32, epochs=2, verbose=0)
