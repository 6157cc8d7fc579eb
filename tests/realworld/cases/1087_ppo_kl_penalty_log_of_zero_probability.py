"""Real-world case 1087.

Source: https://github.com/ray-project/ray/issues/21297
Bug: a PPO agent with the KL-penalty term of RLlib's surrogate loss. The
actor ends in a softmax and the loss takes `tf.math.log` of the
probabilities; on raw (unscaled) observations some action probabilities
underflow to exactly 0, so `log(0) = -inf` and the per-state action KL
`sum(old_p * (log old_p - log p))` is inf/NaN. Even with `kl_coeff = 0`,
`0 * inf = NaN`: the total loss is NaN from the first batch and the actor's
gradients are NaN (the critic's value loss is unaffected).
Setting: Keras 3, model.fit with a custom train_step, RL (PPO) actor-critic.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

keras.utils.set_random_seed(0)
N_ACTIONS, OBS_DIM, N = 4, 4, 256


class PPOAgent(keras.Model):
    def __init__(self, clip=0.2, kl_coeff=0.0, vf_coeff=0.5):
        super().__init__()
        self.actor = keras.Sequential(
            [layers.Dense(64, activation="relu"), layers.Dense(N_ACTIONS, activation="softmax")],
            name="actor")
        self.critic = keras.Sequential(
            [layers.Dense(64, activation="relu"), layers.Dense(1)], name="critic")
        self.clip, self.kl_coeff, self.vf_coeff = clip, kl_coeff, vf_coeff

    def call(self, obs):
        return self.actor(obs), self.critic(obs)

    def train_step(self, data):
        obs, actions = data["obs"], data["actions"]
        advantages, returns, old_probs = data["advantages"], data["returns"], data["old_probs"]
        with tf.GradientTape() as tape:
            probs, values = self(obs, training=True)
            logp = tf.math.log(probs)
            old_logp = tf.math.log(old_probs)
            logp_a = tf.gather(logp, actions, batch_dims=1)
            old_logp_a = tf.gather(old_logp, actions, batch_dims=1)
            ratio = tf.exp(logp_a - old_logp_a)
            surrogate = tf.minimum(
                ratio * advantages,
                tf.clip_by_value(ratio, 1 - self.clip, 1 + self.clip) * advantages)
            action_kl = tf.reduce_sum(old_probs * (old_logp - logp), axis=1)
            policy_loss = -tf.reduce_mean(surrogate) + self.kl_coeff * tf.reduce_mean(action_kl)
            vf_loss = tf.reduce_mean(tf.square(returns - values[:, 0]))
            loss = policy_loss + self.vf_coeff * vf_loss
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "policy_loss": policy_loss, "vf_loss": vf_loss}


obs = np.random.normal(size=(N, OBS_DIM)).astype("float32")
obs[:, 0] = np.random.uniform(0, 500, size=N)  # raw step counter, not normalised
agent = PPOAgent()
agent.compile(optimizer=keras.optimizers.Adam(3e-4))
old_probs = agent.actor.predict(obs, verbose=0)
p = old_probs.astype("float64")
actions = np.array([np.random.choice(N_ACTIONS, p=row / row.sum()) for row in p], dtype="int32")
batch = {
    "obs": obs, "actions": actions,
    "advantages": np.random.normal(size=N).astype("float32"),
    "returns": np.random.normal(size=N).astype("float32"),
    "old_probs": old_probs,
}
print("probabilities exactly 0:", int((old_probs == 0).sum()))
history = agent.fit(batch, batch_size=64, epochs=2, shuffle=False, verbose=0)
print("policy loss:", history.history["policy_loss"], "vf loss:", history.history["vf_loss"])
