"""GC107 sampling-op: tf.random.categorical and other integer samplers."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class SamplingOp(Rule):
    code = "GC107"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "sampling-op"
    summary = (
        "The loss is built from a sample of an integer sampler (`tf.random.categorical`...), which has no gradient."
    )
    message = "{call} draws integer samples, which carry no gradient: {variables} {get} none"
    what = """
Finds a path from the policy's variables to the loss through `tf.random.categorical`
(Multinomial), `tf.random.stateless_categorical`, Poisson or binomial samplers.
"""
    why = """
A sample is a discrete draw: the integer that comes out has no derivative with respect to
the logits. Policy-gradient code that differentiates the sampled action (instead of its
log-probability) trains nothing: every policy variable gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    logits = policy(states)
    actions = tf.random.categorical(logits, 1)[:, 0]
    loss = -tf.reduce_mean(tf.cast(actions, tf.float32) * advantages)
"""
    use_instead = """
with tf.GradientTape() as tape:
    logits = policy(states)
    log_probs = tf.nn.log_softmax(logits)
    taken = tf.reduce_sum(log_probs * tf.one_hot(actions, num_actions), axis=1)
    loss = -tf.reduce_mean(taken * advantages)  # REINFORCE
"""
    fix = (
        "Differentiate the log-probability of the sampled action, not the sample (REINFORCE): "
        "`-tf.reduce_mean(tf.reduce_sum(tf.nn.log_softmax(logits) * tf.one_hot(actions, n), axis=1) * advantages)`; "
        "sample outside the tape. For a differentiable relaxation use Gumbel-softmax."
    )
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/random/categorical",
        "https://arxiv.org/abs/1611.01144",
    )
    op_types = frozenset(
        {
            "Multinomial",
            "StatelessMultinomial",
            "RandomPoisson",
            "RandomPoissonV2",
            "StatelessRandomPoisson",
            "RandomBinomial",
            "StatelessRandomBinomial",
        }
    )
    call_names = {
        "Multinomial": ("categorical", "multinomial"),
        "StatelessMultinomial": ("stateless_categorical",),
        "RandomPoissonV2": ("poisson",),
    }

    invalid = (
        Example(
            "REINFORCE differentiating the sampled action (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
states = np.random.rand(16, 4).astype("float32")
advantages = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    logits = policy(states)
    actions = tf.random.categorical(logits, 1)[:, 0]  # expect: GC107
    loss = -tf.reduce_mean(tf.cast(actions, tf.float32) * advantages)
grads = tape.gradient(loss, policy.trainable_variables)
""",
        ),
        Example(
            "sampled action as the regression output (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


@tf.function
def step(states, expert_actions):
    with tf.GradientTape() as tape:
        sampled = tf.random.categorical(policy(states), 1)[:, 0]  # expect: GC107
        loss = tf.reduce_mean(tf.square(tf.cast(sampled - expert_actions, tf.float32)))
    return tape.gradient(loss, policy.trainable_variables)


step(np.random.rand(16, 4).astype("float32"), np.random.randint(0, 3, 16))
""",
        ),
    )
    valid = (
        Example(
            "REINFORCE on log-probabilities, sampling outside the tape (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
states = np.random.rand(16, 4).astype("float32")
advantages = np.random.rand(16).astype("float32")
actions = tf.random.categorical(policy(states), 1)[:, 0]
with tf.GradientTape() as tape:
    log_probs = tf.nn.log_softmax(policy(states))
    taken = tf.reduce_sum(log_probs * tf.one_hot(actions, 3), axis=1)
    loss = -tf.reduce_mean(taken * advantages)
grads = tape.gradient(loss, policy.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "sampling inside the tape, the loss on the sample's log-probability (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


@tf.function
def step(states, advantages):
    with tf.GradientTape() as tape:
        logits = policy(states)
        actions = tf.random.categorical(logits, 1)[:, 0]
        log_prob = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
        loss = -tf.reduce_mean(log_prob * advantages)
    return tape.gradient(loss, policy.trainable_variables)


step(np.random.rand(16, 4).astype("float32"), np.random.rand(16).astype("float32"))
""",
        ),
    )
