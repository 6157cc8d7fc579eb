"""Real-world case 529.

Source: https://github.com/philtabor/Actor-Critic-Methods-Paper-To-Code/issues/7
Bug: SAC with a tanh-squashed Gaussian policy on an environment whose action
bound is 2 (Pendulum-like). The tanh change-of-variables correction is written
on the already rescaled action, log(1 - (max_action * tanh(u))**2 + eps), as in
the repository's TF2 agent. Whenever |tanh(u)| > 1/2**0.5 the argument of the
log is negative, so log_probs is NaN; the value target critic_value - log_probs
is NaN and the value network's gradients are NaN on the first update (the actor
and critic gradients stay finite, the NaN weights then spread through the soft
target update). No error is raised; the losses just turn into NaN.
Setting: Keras 3 subclassed actor / critic / value models, eager custom loop
with three GradientTapes per learn() call (philtabor's SAC v1 layout).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

STATE_DIM = 3
N_ACTIONS = 1
MAX_ACTION = 2.0
NOISE = 1e-6
BATCH = 64


class ActorNetwork(keras.Model):
    def __init__(self, max_action, n_actions=N_ACTIONS):
        super().__init__()
        self.max_action = max_action
        self.noise = NOISE
        self.fc1 = layers.Dense(64, activation="relu")
        self.fc2 = layers.Dense(64, activation="relu")
        self.mu = layers.Dense(n_actions)
        self.log_sigma = layers.Dense(n_actions)

    def call(self, state):
        x = self.fc2(self.fc1(state))
        sigma = tf.exp(tf.clip_by_value(self.log_sigma(x), -20.0, 2.0))
        return self.mu(x), sigma


class CriticNetwork(keras.Model):
    def __init__(self):
        super().__init__()
        self.fc1 = layers.Dense(64, activation="relu")
        self.fc2 = layers.Dense(64, activation="relu")
        self.q = layers.Dense(1)

    def call(self, inputs):
        state, action = inputs
        return self.q(self.fc2(self.fc1(tf.concat([state, action], axis=1))))


class ValueNetwork(keras.Model):
    def __init__(self):
        super().__init__()
        self.fc1 = layers.Dense(64, activation="relu")
        self.fc2 = layers.Dense(64, activation="relu")
        self.v = layers.Dense(1)

    def call(self, state):
        return self.v(self.fc2(self.fc1(state)))


def gaussian_log_prob(x, mu, sigma):
    return -0.5 * tf.square((x - mu) / sigma) - tf.math.log(sigma) - 0.5 * np.log(2.0 * np.pi)


class Agent:
    def __init__(self, gamma=0.99, tau=0.005, scale=2.0):
        self.gamma, self.tau, self.scale = gamma, tau, scale
        self.actor = ActorNetwork(max_action=MAX_ACTION)
        self.critic_1 = CriticNetwork()
        self.critic_2 = CriticNetwork()
        self.value = ValueNetwork()
        self.target_value = ValueNetwork()
        self.actor_opt = keras.optimizers.Adam(3e-4)
        self.critic_1_opt = keras.optimizers.Adam(3e-4)
        self.critic_2_opt = keras.optimizers.Adam(3e-4)
        self.value_opt = keras.optimizers.Adam(3e-4)
        dummy_s = tf.zeros((1, STATE_DIM))
        dummy_a = tf.zeros((1, N_ACTIONS))
        for net in (self.actor, self.value, self.target_value):
            net(dummy_s)
        for net in (self.critic_1, self.critic_2):
            net((dummy_s, dummy_a))
        self.update_network_parameters(tau=1.0)

    def update_network_parameters(self, tau=None):
        tau = self.tau if tau is None else tau
        for t, w in zip(self.target_value.weights, self.value.weights):
            t.assign(w * tau + t * (1.0 - tau))

    def sample_normal(self, state):
        mu, sigma = self.actor(state)
        actions = mu + sigma * tf.random.normal(tf.shape(mu))
        action = tf.math.tanh(actions) * self.actor.max_action
        log_probs = gaussian_log_prob(actions, mu, sigma)
        log_probs -= tf.math.log(1 - tf.math.pow(action, 2) + self.actor.noise)
        log_probs = tf.math.reduce_sum(log_probs, axis=1, keepdims=True)
        return action, log_probs

    def learn(self, states, actions, rewards, states_, dones):
        with tf.GradientTape() as tape:
            value = tf.squeeze(self.value(states), 1)
            pi_actions, log_probs = self.sample_normal(states)
            log_probs = tf.squeeze(log_probs, 1)
            q1 = self.critic_1((states, pi_actions))
            q2 = self.critic_2((states, pi_actions))
            critic_value = tf.squeeze(tf.math.minimum(q1, q2), 1)
            value_target = critic_value - log_probs
            value_loss = 0.5 * keras.losses.MeanSquaredError()(value_target, value)
        params = self.value.trainable_variables
        grads = tape.gradient(value_loss, params)
        self.value_opt.apply_gradients(zip(grads, params))

        with tf.GradientTape() as tape:
            new_actions, log_probs = self.sample_normal(states)
            log_probs = tf.squeeze(log_probs, 1)
            q1 = self.critic_1((states, new_actions))
            q2 = self.critic_2((states, new_actions))
            critic_value = tf.squeeze(tf.math.minimum(q1, q2), 1)
            actor_loss = tf.math.reduce_mean(log_probs - critic_value)
        params = self.actor.trainable_variables
        grads = tape.gradient(actor_loss, params)
        self.actor_opt.apply_gradients(zip(grads, params))

        with tf.GradientTape(persistent=True) as tape:
            value_ = tf.squeeze(self.target_value(states_), 1)
            q_hat = self.scale * rewards + self.gamma * value_ * (1.0 - dones)
            q1_old = tf.squeeze(self.critic_1((states, actions)), 1)
            q2_old = tf.squeeze(self.critic_2((states, actions)), 1)
            critic_1_loss = 0.5 * keras.losses.MeanSquaredError()(q_hat, q1_old)
            critic_2_loss = 0.5 * keras.losses.MeanSquaredError()(q_hat, q2_old)
        for net, opt, loss in ((self.critic_1, self.critic_1_opt, critic_1_loss),
                               (self.critic_2, self.critic_2_opt, critic_2_loss)):
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
        del tape
        self.update_network_parameters()
        return float(value_loss), float(actor_loss), float(critic_1_loss)


keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
theta = rng.uniform(-np.pi, np.pi, size=(1024,))
theta_dot = rng.uniform(-8.0, 8.0, size=(1024,))
obs = np.stack([np.cos(theta), np.sin(theta), theta_dot], axis=1).astype("float32")
act = rng.uniform(-MAX_ACTION, MAX_ACTION, size=(1024, N_ACTIONS)).astype("float32")
rew = -(theta ** 2 + 0.1 * theta_dot ** 2 + 0.001 * act[:, 0] ** 2).astype("float32") / 10.0
obs_ = np.roll(obs, -1, axis=0)
done = np.zeros((1024,), dtype="float32")

agent = Agent()
for step in range(4):
    idx = rng.integers(0, 1024, size=BATCH)
    losses = agent.learn(tf.constant(obs[idx]), tf.constant(act[idx]), tf.constant(rew[idx]),
                         tf.constant(obs_[idx]), tf.constant(done[idx]))
    print("step", step, "value/actor/critic loss:", losses)
