"""Broken: a policy gradient that differentiates the sampled action.

A contextual bandit: each context has one paying arm out of four. The step samples an
action from the policy with ``tf.random.categorical`` inside the tape and maximises the
payoff of the sampled actions directly. But a sample is an integer draw: it has no
derivative with respect to the logits, so no policy weight gets a gradient and
``apply_gradients`` stops with ``ValueError: No gradients provided for any variable.``

    python examples/gallery/policy_gradient_sampling_broken.py     # the ValueError
    gradcheck examples/gallery/policy_gradient_sampling_broken.py  # GC107 at the sampling line

The fix (policy_gradient_sampling_fixed.py): REINFORCE, which differentiates the
log-probability of the sampled action, weighted by its advantage.
"""

import keras
import numpy as np
import tensorflow as tf

NUM_ARMS = 4
CONTEXT_DIM = 6
TRUE_WEIGHTS = np.random.default_rng(1).normal(size=(CONTEXT_DIM, NUM_ARMS)).astype("float32")


def make_contexts(n, rng):
    """Random contexts and their payoffs: 1 for the best arm of each context, 0 otherwise."""
    contexts = rng.normal(size=(n, CONTEXT_DIM)).astype("float32")
    payoffs = np.eye(NUM_ARMS, dtype="float32")[np.argmax(contexts @ TRUE_WEIGHTS, axis=1)]
    return contexts, payoffs


def make_policy():
    return keras.Sequential(
        [keras.Input(shape=(CONTEXT_DIM,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(NUM_ARMS)]
    )


@tf.function
def train_step(policy, optimizer, contexts, payoffs):
    with tf.GradientTape() as tape:
        logits = policy(contexts, training=True)
        actions = tf.random.categorical(logits, 1)[:, 0]  # expect: GC107
        rewards = tf.gather(payoffs, actions, batch_dims=1)
        loss = -tf.reduce_mean(rewards)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    return tf.reduce_mean(rewards)


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    policy = make_policy()
    optimizer = keras.optimizers.Adam(1e-2)
    for iteration in range(1, 201):
        mean_reward = train_step(policy, optimizer, *make_contexts(128, rng))
        if iteration == 1 or iteration % 50 == 0:
            print(f"iteration {iteration}: mean reward {float(mean_reward):.2f}")
