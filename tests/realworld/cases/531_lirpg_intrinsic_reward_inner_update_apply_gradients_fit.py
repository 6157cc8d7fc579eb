"""Real-world case 531.

Source: https://github.com/Hwhitetooth/lirpg/issues/2
Bug: LIRPG (learning intrinsic rewards for policy gradient) ported to a Keras 3
train_step. The policy takes one policy-gradient step on the mixed advantage
A_ex + lam * r_in(s, a), and the intrinsic-reward network is then trained on
the extrinsic objective of the *updated* policy, which needs the meta-gradient
through that inner step (what the issue asks about: TensorFlow computes it
only if the updated policy is a differentiable function of the inner
gradient). Here the inner step is done in place with an SGD optimizer's
apply_gradients, i.e. assign_sub on the policy variables; the updated policy
reads the variables back, so the extrinsic loss has no path to the intrinsic
network: every intrinsic-reward gradient is None and Keras raises
"No gradients provided for any variable" inside fit().
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

    def log_prob(self, obs, act):
        logp = tf.nn.log_softmax(self.policy(obs))
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
            self.inner_opt.apply_gradients(zip(inner_grads, pol_vars))
            meta_loss = -tf.reduce_mean(self.log_prob(obs, act) * adv_ex)
        meta_grads = meta_tape.gradient(meta_loss, eta)
        self.optimizer.apply_gradients(zip(meta_grads, eta))
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
