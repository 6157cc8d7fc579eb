"""Real-world control 1107 (twin of case 1087).

Source: https://github.com/ray-project/ray/issues/21297
Fixed: the actor outputs logits and every log-probability comes from
`tf.nn.log_softmax` (a zero-probability action gets a large negative but
finite log-probability instead of log(0) = -inf), so the action KL, the loss
and the actor's gradients stay finite even for near-deterministic states.
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
            [layers.Dense(64, activation="relu"), layers.Dense(N_ACTIONS)],
            name="actor")
        self.critic = keras.Sequential(
            [layers.Dense(64, activation="relu"), layers.Dense(1)], name="critic")
        self.clip, self.kl_coeff, self.vf_coeff = clip, kl_coeff, vf_coeff

    def call(self, obs):
        return self.actor(obs), self.critic(obs)

    def train_step(self, data):
        obs, actions = data["obs"], data["actions"]
        advantages, returns, old_logp = data["advantages"], data["returns"], data["old_logp"]
        with tf.GradientTape() as tape:
            logits, values = self(obs, training=True)
            logp = tf.nn.log_softmax(logits)
            logp_a = tf.gather(logp, actions, batch_dims=1)
            old_logp_a = tf.gather(old_logp, actions, batch_dims=1)
            ratio = tf.exp(logp_a - old_logp_a)
            surrogate = tf.minimum(
                ratio * advantages,
                tf.clip_by_value(ratio, 1 - self.clip, 1 + self.clip) * advantages)
            action_kl = tf.reduce_sum(tf.exp(old_logp) * (old_logp - logp), axis=1)
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
old_logp = tf.nn.log_softmax(agent.actor.predict(obs, verbose=0)).numpy()
p = np.exp(old_logp.astype("float64"))
actions = np.array([np.random.choice(N_ACTIONS, p=row / row.sum()) for row in p], dtype="int32")
batch = {
    "obs": obs, "actions": actions,
    "advantages": np.random.normal(size=N).astype("float32"),
    "returns": np.random.normal(size=N).astype("float32"),
    "old_logp": old_logp,
}
print("smallest log-probability:", float(old_logp.min()))
history = agent.fit(batch, batch_size=64, epochs=2, shuffle=False, verbose=0)
print("policy loss:", history.history["policy_loss"], "vf loss:", history.history["vf_loss"])
