"""Real-world case 507.

Source: https://github.com/rlworkgroup/garage/issues/281
Bug: PPO with a Gaussian policy (state-dependent mean, state-independent log_std). As in
the report ("policy_ent_coeff does not seem to work ... a gradient path is broken between
the reward function and the policy std network"), the update reuses the distribution
parameters recorded during the rollout (garage's agent_infos / dist_infos): only the mean
is recomputed inside the tape, while the likelihood ratio and the entropy bonus take the
standard deviation from the rollout's dist_info. That std was computed in act(), outside
any tape, so log_std gets no gradient at all (Keras warns that gradients do not exist
for it) and exploration noise never adapts; the mean network trains normally.
Setting: Keras 3 subclassed policy with an add_weight log_std, synthetic rollout batch,
eager GradientTape update with optimizer.apply_gradients.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

OBS_DIM, ACT_DIM, B, CLIP, ENT_COEF = 4, 2, 128, 0.2, 0.01
keras.utils.set_random_seed(0)


class GaussianPolicy(keras.Model):
    def __init__(self):
        super().__init__(name="gaussian_policy")
        self.hidden = layers.Dense(32, activation="tanh", name="hidden")
        self.mean_head = layers.Dense(ACT_DIM, name="mean")
        self.log_std = self.add_weight(shape=(ACT_DIM,), initializer="zeros", name="log_std")

    def call(self, obs):
        return self.mean_head(self.hidden(obs))


def gaussian_logp(a, mean, std):
    return tf.reduce_sum(-0.5 * tf.square((a - mean) / std) - tf.math.log(std) - 0.5 * np.log(2 * np.pi), -1)


def act(obs):
    mean = policy(obs)
    std = tf.broadcast_to(tf.exp(policy.log_std), tf.shape(mean))
    action = mean + std * tf.random.normal(tf.shape(mean))
    return action, {"mean": mean, "std": std}


policy = GaussianPolicy()
optimizer = keras.optimizers.Adam(3e-4)
obs = np.random.randn(B, OBS_DIM).astype("float32")
actions, dist_info = act(obs)                       # rollout (fake environment below)
old_logp = gaussian_logp(actions, dist_info["mean"], dist_info["std"])
rewards = -tf.reduce_sum(tf.square(actions - 0.5), -1)
advantages = (rewards - tf.reduce_mean(rewards)) / (tf.math.reduce_std(rewards) + 1e-8)

with tf.GradientTape() as tape:
    mean = policy(obs)
    logp = gaussian_logp(actions, mean, dist_info["std"])
    ratio = tf.exp(logp - old_logp)
    surrogate = tf.minimum(ratio * advantages, tf.clip_by_value(ratio, 1 - CLIP, 1 + CLIP) * advantages)
    entropy = tf.reduce_sum(tf.math.log(dist_info["std"]) + 0.5 * np.log(2 * np.pi * np.e), -1)
    loss = -tf.reduce_mean(surrogate) - ENT_COEF * tf.reduce_mean(entropy)
grads = tape.gradient(loss, policy.trainable_variables)
print([v.path for v in policy.trainable_variables])
print({v.path: g is not None for v, g in zip(policy.trainable_variables, grads)})
optimizer.apply_gradients(zip(grads, policy.trainable_variables))
