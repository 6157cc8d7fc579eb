"""GC201/GC202/GC203/GC301 beyond the rule examples: what must stay silent, what must not
be hidden, the API's allow_zero/allow_nonfinite, the opt-in GC301, graph-mode checks in
watched runs, XLA, and how every output format and the exit code carry a warning."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gradcheck.findings import FileResult, Finding
from gradcheck.report import Report
from tests.conftest import run_cli

ZERO_HIDES_ARGMAX = """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    picked = tf.cast(tf.argmax(net(x), axis=1), tf.float32)
    loss = tf.reduce_mean(tf.square(picked - 1.0))
grads = tape.gradient(loss, net.trainable_variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
assert all(g is not None for g in grads)
"""


def test_unconnected_zero_is_diagnosed_as_its_cause_not_as_a_zero_gradient(run_script):
    result = run_script(ZERO_HIDES_ARGMAX)
    assert result.error is None, result.error
    assert [f.code for f in result.findings] == ["GC101"]


ZERO_BATCH = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
x = np.zeros((8, 4), dtype="float32")  # a padding batch: the first kernel's gradient is zero by chance
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
"""

EQUAL_PAIRS = """\
import keras
import numpy as np
import tensorflow as tf

embed = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
a = np.random.rand(6, 5).astype("float32")
with tf.GradientTape() as tape:
    d = embed(a) - embed(a.copy())  # equal inputs: the kernel's two contributions cancel, by chance
    loss = tf.reduce_sum(tf.square(d)) + tf.reduce_sum(d)
grads = tape.gradient(loss, embed.trainable_variables)
"""


@pytest.mark.parametrize("source", [ZERO_BATCH, EQUAL_PAIRS], ids=["zero-batch", "equal-inputs"])
def test_zero_by_chance_is_not_reported(run_script, source):
    result = run_script(source)
    assert result.error is None, result.error
    assert result.findings == []


NAN_LOSS = """\
import numpy as np
import tensorflow as tf

w = tf.Variable(np.ones(3, "float32"), name="w")
x = np.array([1.0, 0.0, 2.0], "float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.math.log(x * w))  # the loss itself is -inf: a forward problem
grads = tape.gradient(loss, [w])
"""


def test_nan_gradient_of_a_nan_loss_is_not_gc202(run_script):
    result = run_script(NAN_LOSS)
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC204", 7)]  # the loss's own rule


SIGN_MASK = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
x = np.random.rand(32, 8).astype("float32")
y = np.random.rand(32, 1).astype("float32")
with tf.GradientTape() as tape:
    pred = model(x)
    keep = (tf.sign(pred - THRESHOLD) + 1.0) / 2.0
    loss = tf.reduce_mean(tf.square(pred * keep - y))
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_a_mask_built_from_sign_is_reported_at_the_mask_not_at_the_sign_inside_it(run_script):
    result = run_script(SIGN_MASK.replace("THRESHOLD", "100.0"))  # no prediction passes
    assert result.error is None, result.error
    assert [(f.code, f.line, f.op) for f in result.findings] == [("GC201", 10, "RealDiv")]
    assert "the mask" in result.findings[0].message
    assert len(result.findings[0].variables) == 4


def test_a_mask_built_from_sign_that_lets_values_through_is_silent(run_script):
    result = run_script(SIGN_MASK.replace("THRESHOLD", "-100.0"))  # every prediction passes
    assert result.error is None, result.error
    assert result.findings == []


INF_MASK_ENTROPY = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(4)])
x = np.random.rand(32, 8).astype("float32")
legal = np.arange(4)[None, :] < np.array([2] * 32)[:, None]
with tf.GradientTape() as tape:
    masked = tf.where(legal, model(x), MASK)
    log_probs = tf.nn.log_softmax(masked)
    entropy = -tf.reduce_sum(tf.where(legal, tf.nn.softmax(masked) * log_probs, 0.0), axis=-1)
    loss = -tf.reduce_mean(entropy)
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_an_inf_factor_is_blamed_where_it_is_made_and_named_where_it_is_multiplied(run_script):
    result = run_script(INF_MASK_ENTROPY.replace("MASK", "-np.inf"))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC202", 9)]
    message = result.findings[0].message
    assert "`tf.where(legal, model(x), -np.inf)` is inf or NaN" in message
    assert "(line 11) multiplies that value by 0" in message


def test_a_large_finite_mask_is_silent(run_script):
    result = run_script(INF_MASK_ENTROPY.replace("MASK", "-1e9"))
    assert result.error is None, result.error
    assert result.findings == []


LATENT_INVERSION = """\
import keras
import numpy as np
import tensorflow as tf

decoder = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(64)])
PRETRAIN
target = np.random.rand(1, 64).astype("float32")
latent = tf.Variable(tf.zeros((1, 8)), name="latent_code")
optimizer = keras.optimizers.Adam(0.05)
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(decoder(latent) - target))
    grads = tape.gradient(loss, [latent])
    optimizer.apply_gradients(zip(grads, [latent]))
"""
FIT_DECODER = """\
decoder.compile(optimizer="adam", loss="mse")
codes = np.random.rand(256, 8).astype("float32")
decoder.fit(codes, np.random.rand(256, 64).astype("float32"), epochs=2, batch_size=64, verbose=0)"""


def test_a_zero_gradient_on_weights_a_cut_short_fit_left_untrained_is_not_reported(run_script):
    """Under python the decoder's biases are trained before the loop and the latent code
    gets a gradient; the check ends ``fit`` at its checked step, so the biases stay 0 and
    relu(0) passes no gradient to the zero code: the check's doing, not the program's."""
    source = LATENT_INVERSION.replace("PRETRAIN", FIT_DECODER)
    result = run_script(source)
    assert result.error is None, result.error
    assert result.findings == []
    # and under plain python the code really gets a gradient (a correct look-alike)
    probe = source + "assert float(tf.reduce_max(tf.abs(grads[0]))) > 0\n"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]


def test_the_same_loop_on_a_decoder_nobody_trains_is_reported(run_script):
    result = run_script(LATENT_INVERSION.replace("PRETRAIN", ""))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC201", 12)]
    assert result.findings[0].variables == ["latent_code"]


SIGN_GATES_ANOTHER_VALUE = """\
import numpy as np
import tensorflow as tf

actor = tf.Variable(tf.random.normal([4, 1]), name="actor")
critic = tf.Variable(tf.random.normal([4, 1]), name="critic")
x = np.random.rand(32, 4).astype("float32")
with tf.GradientTape() as tape:
    direction = tf.sign(tf.matmul(x, actor))
    loss = -tf.reduce_mean(direction * tf.matmul(x, critic))
grads = tape.gradient(loss, [actor, critic])
"""


def test_a_sign_used_as_a_gate_still_names_what_reaches_the_loss_only_through_it(run_script):
    # The sign gates the critic's value (which trains), but it is the actor's only path.
    result = run_script(SIGN_GATES_ANOTHER_VALUE)
    assert result.error is None, result.error
    assert [(f.code, f.line, f.op, f.variables) for f in result.findings] == [("GC201", 8, "Sign", ["actor"])]


PPO_CLIP = """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(2, activation="softmax")])
states = np.random.rand(16, 4).astype("float32")
actions = tf.one_hot(np.random.randint(0, 2, 16), 2)
old_log_p = tf.math.log(tf.reduce_sum(policy(states) * actions, axis=1)) - 1.0  # every ratio beyond the clip
with tf.GradientTape() as tape:
    probs = PROBS
    log_p = tf.math.log(tf.reduce_sum(probs * actions, axis=1))
    ratio = tf.exp(log_p - old_log_p)
    clipped = tf.clip_by_value(ratio, 0.8, 1.2)
    loss = -tf.reduce_mean(tf.minimum(ratio * 2.0, clipped * 2.0))
grads = tape.gradient(loss, policy.trainable_variables)
"""


def test_a_clip_behind_which_a_sign_cuts_every_path_is_blamed_on_the_sign(run_script):
    # The clip lets nothing through, but opening it would change nothing: every path back
    # to the policy crosses the tf.sign, whose gradient is zero by construction.
    result = run_script(PPO_CLIP.replace("PROBS", "tf.sign(policy(states))"))
    assert result.error is None, result.error
    assert [(f.code, f.line, f.op) for f in result.findings] == [("GC201", 10, "Sign")]
    assert len(result.findings[0].variables) == 4


def test_a_clip_that_clips_every_ratio_is_still_blamed_on_the_clip(run_script):
    result = run_script(PPO_CLIP.replace("PROBS", "policy(states)"))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC201", 13)]
    assert len(result.findings[0].variables) == 4


EPISODE_LOOP = """\
import keras
import tensorflow as tf


class ActorCritic(keras.Model):
    def __init__(self):
        super().__init__()
        self.common = keras.layers.Dense(16, activation="relu")
        self.actor = keras.layers.Dense(2)
        self.critic = keras.layers.Dense(1)

    def call(self, x):
        h = self.common(x)
        return self.actor(h), self.critic(h)


model = ActorCritic()


def run_episode(state):
    probs = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    values = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for t in tf.range(5):
        logits, value = model(state)
        probs = probs.write(t, tf.nn.softmax(logits)[0, 0])
        values = values.write(t, value[0, 0])
        state = state + 0.1
    return probs.stack(), values.stack()


@tf.function
def train_step(state):
    with tf.GradientTape() as tape:
        probs, values = run_episode(state)
        probs = PROBS
        advantage = tf.stop_gradient(1.0 - values)
        loss = -tf.reduce_sum(tf.math.log(probs + 1e-3) * advantage) + tf.reduce_sum(tf.square(1.0 - values))
    return tape.gradient(loss, model.trainable_variables)


train_step(tf.random.normal((1, 4)))
"""


@pytest.mark.parametrize(
    ("probs", "code"),
    [
        ("tf.round(probs)", "GC102"),
        ("tf.cast(probs > 0.5, tf.float32)", "GC103"),
        ("tf.stop_gradient(probs)", "GC104"),
        # an index taken back to floats: no data edge joins the argmax to the loss
        ("tf.one_hot(tf.argmax(probs), 5)", "GC101"),
    ],
)
def test_a_cut_that_a_loop_turns_into_zeros_is_named_as_the_cut(run_script, probs, code):
    # The episode's loop is one While op: TensorFlow fills the cut output's gradient with
    # zeros, so the actor head gets zeros, not None; the cut is still the cause.
    result = run_script(EPISODE_LOOP.replace("PROBS", probs))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [(code, 35)]
    assert result.findings[0].variables == ["actor_critic/dense_1/bias", "actor_critic/dense_1/kernel"]


def test_an_episode_loop_with_no_cut_is_silent(run_script):
    result = run_script(EPISODE_LOOP.replace("PROBS", "probs"))
    assert result.error is None, result.error
    assert result.findings == []


# TensorFlow's actor-critic tutorial's loss: `log(probs)` with no epsilon, the advantage not
# stopped (GC203 at the advantage, read through the episode loop: keras-io#194)
TUTORIAL_LOSS = EPISODE_LOOP.replace("tf.math.log(probs + 1e-3)", "tf.math.log(probs)").replace(
    "tf.stop_gradient(1.0 - values)", "1.0 - values"
)


@pytest.mark.parametrize(
    ("probs", "expected"), [("probs", [("GC203", 36)]), ("tf.sign(probs)", [("GC201", 35), ("GC203", 36)])]
)
def test_a_sign_that_makes_a_log_probability_zero_is_the_cause(run_script, probs, expected):
    # sign(p) = 1, log 1 = 0: the advantage's gradient is zero too, which is no chance zero
    # (the loop mixes the actor into the advantage's sources); the sign is the cause. The
    # advantage is not stopped either (GC203, as without the loop).
    result = run_script(TUTORIAL_LOSS.replace("PROBS", probs))
    assert result.error is None, result.error
    assert sorted((f.code, f.line) for f in result.findings) == expected


ACTOR_CRITIC_UNSTOPPED = """\
import keras
import tensorflow as tf

common = keras.layers.Dense(16, activation="relu")
actor = keras.layers.Dense(2)
critic = keras.layers.Dense(1)
states = tf.random.normal((8, 4))
returns = tf.random.normal((8,))
with tf.GradientTape() as tape:
    h = common(states)
    probs = tf.nn.softmax(actor(h))[:, 0]
    values = critic(h)[:, 0]
    probs = PROBS
    advantage = returns - values
    loss = -tf.reduce_sum(tf.math.log(probs + 1e-3) * advantage) + tf.reduce_sum(tf.square(advantage))
variables = common.trainable_variables + actor.trainable_variables + critic.trainable_variables
grads = tape.gradient(loss, variables)
"""


@pytest.mark.parametrize(("probs", "expected"), [("probs", [("GC203", 14)]), ("tf.round(probs)", [("GC102", 13)])])
def test_an_advantage_weighing_a_cut_log_probability_is_no_target(run_script, probs, expected):
    # The advantage is not stopped in both; once a cut makes the log-probability a constant,
    # no trained policy is weighed by it, and the cut is the one finding.
    result = run_script(ACTOR_CRITIC_UNSTOPPED.replace("PROBS", probs))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == expected


RELU_GRADIENT_PENALTY = """\
import numpy as np
import tensorflow as tf

w1 = tf.Variable(tf.random.normal([4, 16]), name="w1")
b1 = tf.Variable(tf.random.normal([16]) * 0.1, name="b1")
w2 = tf.Variable(tf.random.normal([16, 1]), name="w2")
x = tf.constant(np.random.rand(32, 4).astype("float32"))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner.watch(x)
        out = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)
    dx = inner.gradient(out, x)
    penalty = tf.reduce_mean(tf.square(tf.norm(dx, axis=1) - 1.0))
grads = outer.gradient(penalty, [w1, b1, w2])
"""


TARGET_TEMPLATE = """\
import keras
import numpy as np
import tensorflow as tf

table = keras.layers.Embedding(20, 8)
encoder = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(20)])
x = np.random.default_rng(0).normal(size=(16, 6)).astype("float32")
ids = np.random.default_rng(1).integers(0, 20, size=(16,))
table(ids)  # built
with tf.GradientTape() as tape:
    predicted = tf.matmul(tf.nn.softmax(encoder(x)), table.embeddings)
    target = {target}
    loss = tf.reduce_mean(tf.reduce_sum(tf.square(predicted - target), axis=-1))
grads = tape.gradient(loss, encoder.trainable_variables + table.trainable_variables)
"""


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        # an embedding row looked up by the label is computed by no layer (924; 939: a learned
        # smoothing coefficient `(1 - gamma) * s` is the same shape, in tests/realworld)
        ("tf.gather(table.embeddings, ids)", []),
        ("tf.reshape(tf.gather(table.embeddings, ids), [16, 8])", []),
        # the same table applied to an input by a layer of its own: a teacher's output (BYOL)
        ("tf.matmul(tf.nn.softmax(tf.one_hot(ids, 20) * 3.0), table.embeddings)", ["GC203"]),
    ],
)
def test_a_target_made_by_no_layer_is_no_bootstrap_target(run_script, target, expected):
    result = run_script(TARGET_TEMPLATE.format(target=target))
    assert result.error is None, result.error
    assert [f.code for f in result.findings] == expected


def test_a_gradient_penalty_through_relu_starves_what_only_enters_relus_input(run_script):
    # d(penalty)/d(b1) goes only through relu's derivative, whose own derivative TensorFlow
    # defines as zero (ReluGrad); w1 and w2 also enter the penalty directly and train.
    result = run_script(RELU_GRADIENT_PENALTY)
    assert result.error is None, result.error
    assert [(f.code, f.variables) for f in result.findings] == [("GC201", ["b1"])]
    assert "second derivative" in result.findings[0].message


WHERE_THEN_MAXIMUM = """\
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.random.normal([20, 10]) * 0.1, name="w")


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        probs = tf.nn.softmax(tf.matmul(x, w))
        kept = tf.where(probs > 1e9, probs, tf.zeros_like(probs))
        p = tf.maximum(kept, 1e-7)
        loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(p), axis=-1))
    return tape.gradient(loss, [w])


step(np.random.rand(64, 20).astype("float32"), np.eye(10, dtype="float32")[np.random.randint(0, 10, 64)])
"""


def test_a_clip_of_a_value_masked_to_zero_upstream_is_blamed_on_the_mask(run_script):
    # tf.maximum clips everything only because tf.where zeroed what it clips: the where is
    # what the user changes.
    result = run_script(WHERE_THEN_MAXIMUM)
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC201", 11)]
    assert "never takes its true branch" in result.findings[0].message


XLA_STEP = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="relu",
                          bias_initializer=keras.initializers.Constant(-50.0)), keras.layers.Dense(1)])


@tf.function(jit_compile=True)
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
    return tape.gradient(loss, model.trainable_variables)


step(np.random.rand(8, 4).astype("float32"))
"""


def test_xla_compiled_step_is_not_broken_by_the_value_check(run_script):
    result = run_script(XLA_STEP)
    assert result.error is None, result.error
    assert result.steps_checked >= 1
    # a check traces the step without XLA, so its values are checked (test_values_unseen3)
    assert [f.code for f in result.findings] == ["GC201"]


def _dead_relu_model():
    import keras

    model = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(8, activation="relu", bias_initializer=keras.initializers.Constant(-50.0)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_assert_gradients_flow_allow_zero():
    import numpy as np

    import gradcheck

    model = _dead_relu_model()
    batch = (np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32"))
    with pytest.raises(gradcheck.GradientFlowError, match="GC201"):
        gradcheck.assert_gradients_flow(model, batch)
    gradcheck.assert_gradients_flow(model, batch, allow_zero=True)
    names = [v.path for v in model.trainable_variables if not v.path.endswith("dense_1/bias")]
    gradcheck.assert_gradients_flow(model, batch, allow_zero=names)
    with pytest.raises(gradcheck.GradientFlowError):
        gradcheck.assert_gradients_flow(model, batch, allow_zero=["*/kernel"])  # the biases stay flagged


def test_assert_gradients_flow_allow_nonfinite():
    import numpy as np
    import tensorflow as tf

    import gradcheck

    w = tf.Variable(np.zeros((3, 2), "float32"), name="w_zero")

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.norm(tf.matmul(np.ones((4, 3), "float32"), w), axis=1))
        return tape.gradient(loss, [w])

    with pytest.raises(gradcheck.GradientFlowError, match="GC202"):
        gradcheck.assert_gradients_flow(step)
    gradcheck.assert_gradients_flow(step, allow_nonfinite=["w_*"])


CUSTOM = """\
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def double(x):
    def grad(dy):
        return dy  # should be 2 * dy
    return 2.0 * x, grad


w = tf.Variable(np.ones(3, "float32"), name="w")
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(double(w * 1.5)))
grads = tape.gradient(loss, [w])
"""


def test_gc301_is_opt_in(run_script):
    assert run_script(CUSTOM).findings == []
    result = run_script(CUSTOM, check_custom_gradients=True)
    assert [(f.code, f.line, f.variables) for f in result.findings] == [("GC301", 7, ["w"])]
    assert "relative error" in result.findings[0].message


def test_check_step_custom_gradients_keyword():
    import numpy as np
    import tensorflow as tf

    import gradcheck

    @tf.custom_gradient
    def triple(x):
        return 3.0 * x, lambda dy: dy

    w = tf.Variable(np.ones(2, "float32"), name="w3")

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(triple(w) ** 2)
        return tape.gradient(loss, [w])

    assert gradcheck.check_step(step).findings == []
    codes = [f.code for f in gradcheck.check_step(step, check_custom_gradients=True).findings]
    assert codes == ["GC301"]


def _sgd_step(model, loss_of, rate: float):
    """A traced training step of ``model`` with plain SGD: ``loss_of(prediction, y)``."""
    import keras
    import tensorflow as tf

    optimizer = keras.optimizers.SGD(rate)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_of(model(x), y)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def test_watched_graph_step_reports_a_zero_gradient_once_and_keeps_training():
    import numpy as np
    import tensorflow as tf

    import gradcheck

    model = _dead_relu_model()
    step = _sgd_step(model, lambda pred, y: tf.reduce_mean(tf.square(pred - y)), 0.1)
    x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32")
    with gradcheck.watch() as report:
        for _ in range(4):
            step(x, y)
    codes = [f.code for f in report.findings]
    assert codes.count("GC201") == 1


def _graph_ops(step, *args) -> set[str]:
    """Op types of a traced step and of every function in its library."""
    graph = step.get_concrete_function(*args).graph
    types = {op.type for op in graph.get_operations()}
    types |= {node.op for f in graph.as_graph_def().library.function for node in f.node_def}
    return types


def test_watched_graph_step_holds_no_python_op_and_reports_a_late_nan():
    """A session that stays on keeps Python out of the step's graph (a Python op anywhere in
    a function's library slows every call of it), and still reports, once, a non-finite
    gradient that appears only at the third step, naming the variable."""
    import keras
    import numpy as np
    import tensorflow as tf

    import gradcheck

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
    scale = tf.Variable(1.0, trainable=False)

    def loss_of(pred, y):
        return tf.reduce_mean(tf.square(pred - y)) + tf.sqrt(scale * tf.reduce_mean(tf.square(pred)))

    step = _sgd_step(model, loss_of, 0.01)
    x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32")
    with gradcheck.watch() as report:
        for i in range(6):
            if i == 2:  # from the third step on, d sqrt(0) = inf
                scale.assign(0.0)
            step(x, y)
        assert not {"EagerPyFunc", "PyFunc"} & _graph_ops(step, x, y)
    found = [f for f in report.findings if f.code == "GC202"]
    assert len(found) == 1, report.to_text()
    assert any("kernel" in v for v in found[0].variables)


def test_installed_graph_step_reports_by_uninstall():
    """One degenerate traced step and nothing after it: the diagnosis comes out by the time
    the session ends, not at some later call."""
    import io

    import numpy as np
    import tensorflow as tf

    import gradcheck

    model = _dead_relu_model()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        return tape.gradient(loss, model.trainable_variables)

    out = io.StringIO()
    gradcheck.install(stream=out)
    try:
        step(np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32"))
    finally:
        gradcheck.uninstall()
    assert "GC201" in out.getvalue()


# -- reporting -----------------------------------------------------------------------------
def _report(code: str) -> Report:
    finding = Finding(code=code, message="m", path="train.py", line=3, variables=["dense/kernel"], fix="f")
    return Report([FileResult("train.py", findings=[finding])])


@pytest.mark.parametrize(
    ("code", "severity"), [("GC201", "warning"), ("GC202", "error"), ("GC203", "warning"), ("GC301", "error")]
)
def test_formats_carry_the_severity(code, severity):
    from gradcheck.output import render

    report = _report(code)
    record = json.loads(render(report, "json"))["files"][0]["findings"][0]
    assert (record["code"], record["severity"]) == (code, severity)
    sarif = json.loads(render(report, "sarif"))
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == code and result["level"] == severity
    assert render(report, "github").startswith(f"::{severity} ")
    assert report.exit_code() == 1  # a warning fails a run, as in ruff and flake8
    assert report.exit_code(exit_zero=True) == 0


def test_summary_counts_warnings():
    assert _report("GC201").summary() == "1 finding (1 warning) in 1 file"
    assert _report("GC202").summary() == "1 finding in 1 file"


def test_config_check_custom_gradients_key():
    from gradcheck.config import ConfigError, from_table

    assert from_table({"check-custom-gradients": True}).check_custom_gradients is True
    assert from_table({}).check_custom_gradients is False
    with pytest.raises(ConfigError, match="check-custom-gradients"):
        from_table({"check-custom-gradients": "yes"})


def test_cli_select_ignore_and_exit_code_for_a_warning(tmp_path):
    script = tmp_path / "dead_relu.py"
    script.write_text(
        "import keras, numpy as np, tensorflow as tf\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(\n"
        "    8, activation='relu', bias_initializer=keras.initializers.Constant(-50.0)), keras.layers.Dense(1)])\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_mean(tf.square(model(np.random.rand(16, 4).astype('float32'))))\n"
        "grads = tape.gradient(loss, model.trainable_variables)\n",
        encoding="utf-8",
    )
    done = run_cli("--format", "json", "-q", str(script))
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["files"][0]["findings"]
    assert [(f["code"], f["severity"]) for f in findings] == [("GC201", "warning")]
    assert run_cli("--format", "json", "-q", "--ignore", "GC2", str(script)).returncode == 0
    assert run_cli("--format", "json", "-q", "--select", "GC1", str(script)).returncode == 0


LISTWISE = """\
import keras
import numpy as np
import tensorflow as tf

scorer = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
x = np.random.default_rng(0).normal(size=(16, 5)).astype("float32")
labels = np.random.default_rng(1).random((16,)).astype("float32")


def step(x, labels):
    with tf.GradientTape() as tape:
        scores = SCORES
        log_p = tf.nn.log_softmax(scores, axis=-1)
        target = tf.reshape(labels, tf.shape(scores))
        loss = -tf.reduce_mean(tf.reduce_sum(target * log_p, axis=-1))
    return tape.gradient(loss, scorer.trainable_variables)


STEP(x, labels)
"""


@pytest.mark.parametrize("step", ["step", "tf.function(step)"])
@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # one document per list: log_softmax of one value is 0 whatever it is (537)
        ("scorer(x)", [("GC201", 13, "one-class")]),
        ("tf.reshape(scorer(x), [4, 4])", []),  # four lists of four documents
    ],
)
def test_a_softmax_over_an_axis_of_one_passes_nothing(run_script, step, scores, expected):
    result = run_script(LISTWISE.replace("SCORES", scores).replace("STEP(x", f"{step}(x"))
    assert result.error is None, result.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in result.findings] == expected
