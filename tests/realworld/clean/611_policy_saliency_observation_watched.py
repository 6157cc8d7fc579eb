"""Clean control 611 (expected clean).

The policy step of case 211 with tape.watch(observation) at the top of the
tape block: the gradient of the action logits with respect to the observation
exists and gives a per-feature saliency.
Setting: reinforcement learning (baselines-style PolicyWithValue), @tf.function
step with a GradientTape, Keras 3 networks.
"""
import numpy as np
import tensorflow as tf
import keras

np.random.seed(0)
tf.random.set_seed(0)
ob_dim, n_actions = 8, 4


class PolicyWithValue(tf.Module):
    def __init__(self, n_actions, policy_network):
        super().__init__()
        self.policy_network = policy_network
        self.pi = keras.layers.Dense(n_actions, kernel_initializer=keras.initializers.Orthogonal(0.01))
        self.value_fc = keras.layers.Dense(1)

    @tf.function
    def step(self, observation):
        with tf.GradientTape() as tape:
            tape.watch(observation)
            latent = self.policy_network(observation)
            a_logits = self.pi(latent)
            v = self.value_fc(latent)[:, 0]
            action = tf.random.categorical(a_logits, 1)[:, 0]
            neglogp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=action, logits=a_logits)
        grad_obs = tape.gradient(a_logits, observation)
        return action, v, neglogp, grad_obs


mlp = keras.Sequential([keras.Input((ob_dim,)), keras.layers.Dense(64, activation="tanh"),
                        keras.layers.Dense(64, activation="tanh")])
policy = PolicyWithValue(n_actions, mlp)
observation = np.random.randn(5, ob_dim).astype("float32")
action, v, neglogp, grad_obs = policy.step(tf.constant(observation))
print("saliency:", tf.reduce_mean(tf.abs(grad_obs), axis=0).numpy())
