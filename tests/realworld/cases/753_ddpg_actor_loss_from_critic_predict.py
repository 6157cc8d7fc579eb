"""Real-world case 753.

Source: https://github.com/MorvanZhou/Reinforcement-learning-with-tensorflow/issues/144
Bug: a tf.keras rewrite of MorvanZhou's DDPG. The critic update is fine, but
the actor's loss is built from `critic.predict([s, actor.predict(s)])`: predict
runs both networks outside the tape and returns NumPy arrays, so -mean(Q) is a
constant and the actor gets no gradient ("the Q computed by predict cannot be
back-propagated to update the actor").
Setting: reinforcement learning (DDPG, target networks, replay memory), eager tapes, tf_keras (Keras 2).
"""
import numpy as np
import tensorflow as tf
import tf_keras as keras

MAX_EP_STEPS = 40
LR_A, LR_C = 0.001, 0.002
GAMMA, TAU = 0.9, 0.01
MEMORY_CAPACITY, BATCH_SIZE = 200, 32
S_DIM, A_DIM, A_BOUND = 3, 1, 2.0


class ToyPendulum:
    """Pendulum-like dynamics with NumPy; reward prefers small angle and torque."""
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.th, self.thdot = self.rng.uniform(-np.pi, np.pi), self.rng.uniform(-1, 1)
        return self._obs()

    def _obs(self):
        return np.array([np.cos(self.th), np.sin(self.th), self.thdot], dtype=np.float32)

    def step(self, u):
        u = float(np.clip(u, -A_BOUND, A_BOUND)[0])
        r = -(self.th ** 2 + 0.1 * self.thdot ** 2 + 0.001 * u ** 2)
        self.thdot = np.clip(self.thdot + (-3 * np.sin(self.th + np.pi) + 3 * u) * 0.05, -8, 8)
        self.th = ((self.th + self.thdot * 0.05 + np.pi) % (2 * np.pi)) - np.pi
        return self._obs(), r


def build_actor(name):
    s = keras.Input((S_DIM,))
    net = keras.layers.Dense(30, activation="relu", name="a_l1")(s)
    a = keras.layers.Dense(A_DIM, activation="tanh", name="a")(net)
    return keras.Model(s, a * A_BOUND, name=name)


def build_critic(name):
    s = keras.Input((S_DIM,))
    a = keras.Input((A_DIM,))
    net = keras.layers.Dense(30, activation="relu", name="c_l1")(keras.layers.Concatenate()([s, a]))
    return keras.Model([s, a], keras.layers.Dense(1, name="q")(net), name=name)


class DDPG:
    def __init__(self):
        self.memory = np.zeros((MEMORY_CAPACITY, S_DIM * 2 + A_DIM + 1), dtype=np.float32)
        self.pointer = 0
        self.actor, self.actor_target = build_actor("actor_eval"), build_actor("actor_target")
        self.critic, self.critic_target = build_critic("critic_eval"), build_critic("critic_target")
        self.actor_target.set_weights(self.actor.get_weights())
        self.critic_target.set_weights(self.critic.get_weights())
        self.a_opt = keras.optimizers.Adam(LR_A)
        self.c_opt = keras.optimizers.Adam(LR_C)

    def choose_action(self, s):
        return self.actor(s[None, :]).numpy()[0]

    def store_transition(self, s, a, r, s_):
        self.memory[self.pointer % MEMORY_CAPACITY, :] = np.hstack((s, a, [r], s_))
        self.pointer += 1

    def soft_replace(self):
        for net, target in ((self.actor, self.actor_target), (self.critic, self.critic_target)):
            for w, tw in zip(net.weights, target.weights):
                tw.assign((1 - TAU) * tw + TAU * w)

    def learn(self):
        indices = np.random.choice(min(self.pointer, MEMORY_CAPACITY), size=BATCH_SIZE)
        bt = self.memory[indices, :]
        bs, ba = bt[:, :S_DIM], bt[:, S_DIM:S_DIM + A_DIM]
        br, bs_ = bt[:, -S_DIM - 1:-S_DIM], bt[:, -S_DIM:]

        q_target = br + GAMMA * self.critic_target([bs_, self.actor_target(bs_)])
        with tf.GradientTape() as tape:
            q = self.critic([bs, ba])
            td_error = tf.reduce_mean(tf.square(q_target - q))
        c_grads = tape.gradient(td_error, self.critic.trainable_variables)
        self.c_opt.apply_gradients(zip(c_grads, self.critic.trainable_variables))

        q = self.critic.predict([bs, self.actor.predict(bs, verbose=0)], verbose=0)
        with tf.GradientTape() as tape:
            a_loss = -tf.reduce_mean(q)
        a_grads = tape.gradient(a_loss, self.actor.trainable_variables)
        self.a_opt.apply_gradients(zip(a_grads, self.actor.trainable_variables))
        self.soft_replace()
        return float(td_error), float(a_loss)


env = ToyPendulum()
ddpg = DDPG()
np.random.seed(0)
var = 3.0
s = env.reset()
for j in range(MAX_EP_STEPS * 2):
    a = np.clip(np.random.normal(ddpg.choose_action(s), var), -A_BOUND, A_BOUND)
    s_, r = env.step(a)
    ddpg.store_transition(s, a, r / 10, s_)
    if ddpg.pointer > BATCH_SIZE:
        var *= 0.9995
        td, a_loss = ddpg.learn()
    s = s_ if (j + 1) % MAX_EP_STEPS else env.reset()
print("td_error", td, "actor loss", a_loss)
