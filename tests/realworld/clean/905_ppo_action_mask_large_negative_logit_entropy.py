"""Clean control 905 (look-alike of case 505).

Source: https://github.com/tensorflow/agents/issues/562
The same masked PPO update with the entropy bonus, but illegal actions get a large finite
negative logit (-1e9) instead of -inf, as TF-Agents' masked distributions do with the
dtype minimum. Their probability is still exactly 0 and the tf.where-guarded entropy is
unchanged, but log p is finite, so the backward pass of p * log p never forms 0 * -inf and
every gradient stays finite.
Setting: Keras 3 functional actor-critic (shared trunk, policy + value heads), eager
GradientTape update on a synthetic rollout batch with a per-state legal-action mask.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

N_OBS, N_ACT, B, CLIP, ENT_COEF = 6, 5, 64, 0.2, 0.01
keras.utils.set_random_seed(0)

obs_in = keras.Input((N_OBS,))
trunk = layers.Dense(32, activation="tanh", name="trunk")(obs_in)
policy_logits = layers.Dense(N_ACT, name="policy")(trunk)
value = layers.Dense(1, name="value")(trunk)
model = keras.Model(obs_in, [policy_logits, value])
optimizer = keras.optimizers.Adam(3e-4)

obs = np.random.randn(B, N_OBS).astype("float32")
legal = np.random.rand(B, N_ACT) < 0.6
legal[np.arange(B), np.random.randint(0, N_ACT, B)] = True        # at least one legal action
actions = np.array([np.random.choice(np.flatnonzero(row)) for row in legal], "int32")
old_logp = np.log(1.0 / legal.sum(1)).astype("float32")
advantages = np.random.randn(B).astype("float32")
returns = np.random.randn(B).astype("float32")


def ppo_step():
    with tf.GradientTape() as tape:
        logits, v = model(obs)
        masked = tf.where(legal, logits, -1e9)
        log_probs = tf.nn.log_softmax(masked)
        probs = tf.nn.softmax(masked)
        logp = tf.gather(log_probs, actions, batch_dims=1)
        ratio = tf.exp(logp - old_logp)
        surrogate = tf.minimum(ratio * advantages, tf.clip_by_value(ratio, 1 - CLIP, 1 + CLIP) * advantages)
        entropy = -tf.reduce_sum(tf.where(legal, probs * log_probs, 0.0), axis=-1)
        value_loss = tf.reduce_mean(tf.square(returns - tf.squeeze(v, -1)))
        loss = -tf.reduce_mean(surrogate) + 0.5 * value_loss - ENT_COEF * tf.reduce_mean(entropy)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss, grads


for step in range(2):
    loss, grads = ppo_step()
    print(f"step {step}: loss={float(loss):.4f}")
    print({v.path: bool(np.isfinite(g.numpy()).all()) for v, g in zip(model.trainable_variables, grads)})
