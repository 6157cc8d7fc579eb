"""Real-world control 931 (fixed twin of case 531).

Source: https://github.com/Hwhitetooth/lirpg/issues/2
Fix: the inner policy step is computed functionally, as LIRPG's policy_new:
fast weights w - lr * g are tensors, and the updated policy is evaluated with
Keras 3's stateless_call on them, so the extrinsic loss of the updated policy
is differentiable w.r.t. the intrinsic-reward network through the inner
gradient. The real policy variables are then updated with the same inner
gradient by the SGD optimizer.
Setting: Keras 3 Model subclass with custom train_step (nested GradientTapes,
two optimizers), Sequential policy, functional intrinsic-reward net, fit() on
a tf.data batch of logged (obs, action, extrinsic advantage).
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

OBS_DIM = 6
N_ACTIONS = 3
INNER_LR = 0.1
LAM = 0.5


class LIRPGAgent(keras.Model):
    def __init__(self, policy, intrinsic):
        super().__init__()
        self.policy = policy
        self.intrinsic = intrinsic
        self.inner_opt = keras.optimizers.SGD(INNER_LR)

    def call(self, obs):
        return self.policy(obs)

    def log_prob(self, obs, act, weights=None):
        if weights is None:
            logits = self.policy(obs)
        else:
            logits, _ = self.policy.stateless_call(
                weights, self.policy.non_trainable_variables, obs)
        logp = tf.nn.log_softmax(logits)
        return tf.reduce_sum(logp * tf.one_hot(act, N_ACTIONS), axis=-1)

    def train_step(self, data):
        obs, act, adv_ex = data
        pol_vars = self.policy.trainable_variables
        eta = self.intrinsic.trainable_variables
        with tf.GradientTape() as meta_tape:
            with tf.GradientTape() as inner_tape:
                r_in = tf.squeeze(self.intrinsic([obs, tf.one_hot(act, N_ACTIONS)]), -1)
                adv_mix = adv_ex + LAM * r_in
                inner_loss = -tf.reduce_mean(self.log_prob(obs, act) * adv_mix)
            inner_grads = inner_tape.gradient(inner_loss, pol_vars)
            fast = [w - INNER_LR * g for w, g in zip(pol_vars, inner_grads)]
            meta_loss = -tf.reduce_mean(self.log_prob(obs, act, weights=fast) * adv_ex)
        meta_grads = meta_tape.gradient(meta_loss, eta)
        self.optimizer.apply_gradients(zip(meta_grads, eta))
        self.inner_opt.apply_gradients(zip(inner_grads, pol_vars))
        return {"inner_loss": inner_loss, "meta_loss": meta_loss}


keras.utils.set_random_seed(0)
policy = keras.Sequential(
    [layers.Input((OBS_DIM,)), layers.Dense(32, activation="tanh"), layers.Dense(N_ACTIONS)],
    name="policy",
)
o_in = keras.Input((OBS_DIM,), name="obs")
a_in = keras.Input((N_ACTIONS,), name="action_onehot")
h = layers.Dense(32, activation="relu", name="rin_hidden")(layers.Concatenate()([o_in, a_in]))
intrinsic = keras.Model([o_in, a_in], layers.Dense(1, activation="tanh", name="rin_out")(h),
                        name="intrinsic")

agent = LIRPGAgent(policy, intrinsic)
agent.inner_opt.build(policy.trainable_variables)
agent.compile(optimizer=keras.optimizers.Adam(1e-3))

rng = np.random.default_rng(0)
obs = rng.normal(size=(256, OBS_DIM)).astype("float32")
act = rng.integers(0, N_ACTIONS, size=(256,)).astype("int32")
adv = (obs[:, 0] * (act == 1) - 0.5 * obs[:, 1] * (act == 2)).astype("float32")
adv = (adv - adv.mean()) / (adv.std() + 1e-8)
ds = tf.data.Dataset.from_tensor_slices((obs, act, adv)).batch(64)
agent.fit(ds, epochs=1, verbose=0)
print("meta step done")
