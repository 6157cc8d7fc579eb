"""Clean control 790 (expected clean).

Twin of case 770 (https://github.com/hill-a/stable-baselines/pull/505): the
invalid actions are still masked with -inf logits before the softmax, but the
entropy bonus takes the log-probabilities of the legal actions only,
tf.where(mask, log_softmax(logits), 0), so a masked action contributes
0 * 0 instead of 0 * inf; the -inf logits and the unselected -inf branch
never reach the loss.
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


def entropy(logits, action_mask):
    p0 = tf.nn.softmax(logits)
    log_p0 = tf.where(action_mask, tf.nn.log_softmax(logits), tf.zeros_like(logits))
    return -tf.reduce_sum(p0 * log_p0, axis=-1)


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
        ent = tf.reduce_mean(entropy(logits, tf.constant(mask)))
        loss = pg_loss - ent_coef * ent + vf_coef * vf_loss
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("update", update, "loss", float(loss), "entropy", float(ent))
    if not np.isfinite(float(loss)):
        print("loss is not finite, stopping")
        break
