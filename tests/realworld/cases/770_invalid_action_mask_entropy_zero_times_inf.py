"""Real-world case 770.

Source: https://github.com/hill-a/stable-baselines/pull/505
Bug: invalid actions are masked by setting their logits to -inf, which the
softmax handles (their probability is exactly 0), but the entropy bonus is
computed the stable-baselines way, sum(p0 * (log(z0) - a0)) with
a0 = logits - max(logits): for a masked action a0 is -inf, log(z0) - a0 is
+inf and p0 * inf = 0 * inf is NaN, so the A2C loss is NaN on every update.
Setting: eager custom loop (A2C-style update), Keras 3 functional actor-critic, action masking.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

n_actions = 6
obs_dim = 10
ent_coef = 0.01
vf_coef = 0.5

rng = np.random.default_rng(0)

obs_in = keras.Input(shape=(obs_dim,))
h = layers.Dense(64, activation="tanh")(obs_in)
h = layers.Dense(64, activation="tanh")(h)
pi_logits = layers.Dense(n_actions, name="pi")(h)
value = layers.Dense(1, name="vf")(h)
model = keras.Model(obs_in, [pi_logits, value], name="actor_critic")
optimizer = keras.optimizers.RMSprop(7e-4)


def masked_logits_fn(logits, action_mask):
    return tf.where(action_mask, logits, tf.fill(tf.shape(logits), -np.inf))


def entropy(logits):
    a0 = logits - tf.reduce_max(logits, axis=-1, keepdims=True)
    exp_a0 = tf.exp(a0)
    z0 = tf.reduce_sum(exp_a0, axis=-1, keepdims=True)
    p0 = exp_a0 / z0
    return tf.reduce_sum(p0 * (tf.math.log(z0) - a0), axis=-1)


def rollout(n_steps=32):
    obs = rng.normal(size=(n_steps, obs_dim)).astype("float32")
    mask = rng.random((n_steps, n_actions)) < 0.7
    mask[:, 0] = True  # "no-op" is always legal
    logits, _ = model(obs)
    logits = masked_logits_fn(logits, tf.constant(mask)).numpy()
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    actions = np.array([rng.choice(n_actions, p=p) for p in probs])
    returns = rng.normal(1.0, 0.5, size=n_steps).astype("float32")
    return obs, mask, actions, returns


for update in range(5):
    obs, mask, actions, returns = rollout()
    with tf.GradientTape() as tape:
        logits, values = model(obs)
        logits = masked_logits_fn(logits, tf.constant(mask))
        values = tf.squeeze(values, axis=-1)
        advantages = returns - tf.stop_gradient(values)
        neglogpac = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
        pg_loss = tf.reduce_mean(advantages * neglogpac)
        vf_loss = tf.reduce_mean(tf.square(returns - values))
        ent = tf.reduce_mean(entropy(logits))
        loss = pg_loss - ent_coef * ent + vf_coef * vf_loss
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("update", update, "loss", float(loss), "entropy", float(ent))
    if not np.isfinite(float(loss)):
        print("loss is not finite, stopping")
        break
