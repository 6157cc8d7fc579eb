"""Clean control 870 (look-alike of case 470).

Source: https://github.com/tensorforce/tensorforce/issues/312
Fix: the "old" log-probability is built from tf.stop_gradient(logits), the variant the
reporter asks about: the ratio is still 1 on the first minibatch, but only the new
log-probability carries a gradient, so the clipped surrogate trains the policy head.
Setting: Keras 3 subclassed actor-critic (shared trunk, policy and value heads),
@tf.function PPO update over minibatches, categorical policy.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
CLIP = 0.2


class ActorCritic(keras.Model):
    def __init__(self, n_actions):
        super().__init__()
        self.trunk = keras.layers.Dense(32, activation="tanh")
        self.policy = keras.layers.Dense(n_actions)
        self.value = keras.layers.Dense(1)

    def call(self, obs):
        h = self.trunk(obs)
        return self.policy(h), self.value(h)[:, 0]


def log_probability(logits, actions):
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)


model = ActorCritic(n_actions=4)
optimizer = keras.optimizers.Adam(3e-4)


@tf.function
def ppo_update(obs, actions, advantages, returns):
    with tf.GradientTape() as tape:
        logits, values = model(obs)
        log_prob = log_probability(logits, actions)
        old_log_prob = log_probability(tf.stop_gradient(logits), actions)
        prob_ratio = tf.exp(log_prob - old_log_prob)
        surr1 = prob_ratio * advantages
        surr2 = tf.clip_by_value(prob_ratio, 1.0 - CLIP, 1.0 + CLIP) * advantages
        policy_loss = -tf.reduce_mean(tf.minimum(surr1, surr2))
        value_loss = tf.reduce_mean(tf.square(returns - values))
        loss = policy_loss + 0.5 * value_loss
    grads = tape.gradient(loss, model.trainable_variables)
    for g in grads:
        tf.debugging.assert_all_finite(g, "non-finite gradient")
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


obs = np.random.randn(128, 8).astype("float32")
actions = np.random.randint(0, 4, size=128).astype("int32")
advantages = np.random.randn(128).astype("float32")
returns = np.random.randn(128).astype("float32")
for epoch in range(3):
    for start in range(0, 128, 32):
        batch = slice(start, start + 32)
        ppo_update(obs[batch], actions[batch], advantages[batch], returns[batch])

with tf.GradientTape() as tape:
    logits, _ = model(obs)
    log_prob = log_probability(logits, actions)
    ratio = tf.exp(log_prob - log_probability(tf.stop_gradient(logits), actions))
    surrogate = -tf.reduce_mean(ratio * advantages)
policy_grads = tape.gradient(surrogate, model.policy.trainable_variables)
assert all(g is not None and float(tf.norm(g)) > 0 for g in policy_grads), policy_grads
