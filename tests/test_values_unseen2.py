"""Degenerate gradients, non-finite losses and GC301's re-runs on code nobody here has seen,
round 3 (issue 36 §3, issue 38): each mechanism with the shape that went wrong, and a
correct look-alike, in eager code and in a ``tf.function`` (and under tf_keras where the
shape exists there)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _codes_lines(result) -> list[tuple[str, int]]:
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


needs_tf_keras = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")


# -- 1. GC301's default check re-runs a custom-gradient forward that draws random numbers --
# The re-run must leave every random state as it found it: what the program draws after
# the checked step is what it draws under python (a Keras SeedGenerator, dropout, the
# legacy tf.random ops under a global seed, a tf.random.Generator, NumPy, Python's random).
RANDOM_FORWARD = """\
import os
import random

import numpy as np
import tensorflow as tf
{keras_import}

keras.utils.set_random_seed(0)
generator = tf.random.Generator.from_seed(5)
tf.random.set_global_generator(tf.random.Generator.from_seed(7))  # its default is not reproducible
{seed_generator}


@tf.custom_gradient
def noisy_relu(x):
    y = tf.nn.relu(x) + 0.01 * tf.random.normal(tf.shape(x)) + 0.01 * generator.normal(tf.shape(x))
    y = tf.nn.dropout(y, 0.2) + 0.01 * tf.random.get_global_generator().normal(tf.shape(x))
    y = y + 0.01 * float(np.random.rand()) + 0.01 * random.random(){keras_noise}

    def grad(upstream):
        return upstream * tf.cast(x > 0, upstream.dtype)

    return y, grad


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.1)
# built here: a first traced call that creates the optimizer's variables is traced twice
# under python (and once under gradcheck, which skips the update): the forward's NumPy and
# Python draws happen at tracing
opt.build(model.trainable_variables)
x = np.ones((4, 3), "float32")
y = np.zeros((4, 1), "float32")


{decorator}
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(noisy_relu(model(x, training=True)) - y))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for _ in range(2):
    step()
    draws = [
        tf.random.normal((2,)),
        generator.normal((2,)),
        tf.random.get_global_generator().normal((2,)),
        np.random.rand(2),
        random.random(),
        model.layers[1](tf.ones((1, 8)), training=True),{keras_draw}
    ]
    with open(os.environ["DRAWS_OUT"], "a") as out:  # outside the project: the sandbox keeps it
        out.write(repr([np.round(np.asarray(d, np.float64), 6).tolist() for d in draws]) + "\\n")
"""

KERAS3 = {
    "keras_import": "import keras",
    "seed_generator": "noise = keras.random.SeedGenerator(1)",
    "keras_noise": " + 0.01 * keras.random.normal(tf.shape(x), seed=noise)",
    "keras_draw": "\n        keras.random.normal((2,), seed=noise),",
}
TF_KERAS = {"keras_import": "import tf_keras as keras", "seed_generator": "", "keras_noise": "", "keras_draw": ""}


def _first_draws(tmp_path, script, python: str, env: dict) -> tuple[str, str]:
    """The program's draws after its first step under python, and under gradcheck."""
    out = []
    (tmp_path / "out").mkdir(exist_ok=True)
    for name, command in (("python", [python, str(script)]), ("gradcheck", [python, "-m", "gradcheck", str(script)])):
        draws = tmp_path / "out" / f"draws_{name}.txt"  # not the script's folder: the sandbox's
        proc = subprocess.run(
            command,
            cwd=ROOT,
            env=dict(os.environ, **env, DRAWS_OUT=str(draws)),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert draws.exists(), proc.stdout + proc.stderr
        out.append(draws.read_text().splitlines()[0])
        if name == "gradcheck":
            assert "No findings in 1 checked file" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return out[0], out[1]


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_custom_gradient_rerun_leaves_random_state(tmp_path, decorator):
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "random_forward.py"
    script.write_text(RANDOM_FORWARD.format(decorator=decorator, **KERAS3))
    under_python, under_gradcheck = _first_draws(tmp_path, script, sys.executable, {})
    assert under_gradcheck == under_python


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_tf_keras_custom_gradient_rerun_leaves_random_state(tmp_path, decorator):
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "random_forward.py"
    script.write_text(RANDOM_FORWARD.format(decorator=decorator, **TF_KERAS))
    under_python, under_gradcheck = _first_draws(tmp_path, script, sys.executable, {"TF_USE_LEGACY_KERAS": "1"})
    assert under_gradcheck == under_python


# -- 2. a -inf mask constant is not the batch (770) ---------------------------------------
# Masked logits (-inf from a constant the program built) are fine through a softmax; an
# entropy written as sum(p * (log z - a)) meets them as 0 × inf. GC204 points at that
# product, not at "the batch already holds an Inf"; the twin (log-probabilities of the
# legal actions only) is silent; and a NaN really in the batch is still the batch's.
MASKED_ENTROPY = """\
{keras_import}
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
obs = rng.normal(size=(16, 5)).astype("float32")
mask = rng.random((16, 4)) < 0.6
mask[:, 0] = True
obs[3, 2] = {obs_value}
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(4)])
opt = keras.optimizers.SGD(0.01)


def entropy(logits):
    masked = tf.where(tf.constant(mask), logits, tf.fill(tf.shape(logits), -np.inf))
    a0 = masked - tf.reduce_max(masked, axis=-1, keepdims=True)
    p0 = tf.exp(a0) / tf.reduce_sum(tf.exp(a0), axis=-1, keepdims=True)
    return {entropy}


{decorator}
def step(x):
    with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(entropy(model(x)))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for _ in range(2):
    step(obs)
"""
ZERO_TIMES_INF = "tf.reduce_sum(p0 * (tf.math.log(tf.reduce_sum(tf.exp(a0), axis=-1, keepdims=True)) - a0), axis=-1)"
LEGAL_ONLY = "-tf.reduce_sum(p0 * tf.where(tf.constant(mask), tf.nn.log_softmax(masked), 0.0), axis=-1)"


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_inf_mask_constant_met_by_zero_is_the_product(run_script, decorator):
    result = run_script(
        MASKED_ENTROPY.format(keras_import="import keras", decorator=decorator, entropy=ZERO_TIMES_INF, obs_value="0.5")
    )
    assert _codes_lines(result) == [("GC204", 18)]
    (finding,) = result.findings
    assert "0 × inf" in finding.message and "batch" not in finding.message


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_inf_mask_constant_kept_out_of_the_product_silent(run_script, decorator):
    result = run_script(
        MASKED_ENTROPY.format(keras_import="import keras", decorator=decorator, entropy=LEGAL_ONLY, obs_value="0.5")
    )
    assert _codes_lines(result) == []


def test_nan_in_the_batch_still_the_batchs(run_script):
    result = run_script(
        MASKED_ENTROPY.format(keras_import="import keras", decorator="", entropy=LEGAL_ONLY, obs_value="np.nan")
    )
    assert [f.code for f in result.findings] == ["GC204"]
    assert "the batch already holds" in result.findings[0].message


# -- 3. a target network among the trained variables (760) --------------------------------
# A Double DQN that differentiates ``self.trainable_variables``, which hold the target
# network too: the TD target's network is trained by the same step (GC203 at the target);
# the twin differentiates the online network's variables only.
TARGET_NETWORK_TRAINED = """\
{keras_import}
import numpy as np
import tensorflow as tf


def build(name):
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)], name=name)


class Agent(keras.Model):
    def __init__(self):
        super().__init__()
        self.online = build("online")
        self.target = build("target")
        self.target.set_weights(self.online.get_weights())
        self.opt = keras.optimizers.Adam(1e-3)

    {decorator}
    def learn(self, s, a, r, s2):
        with tf.GradientTape() as tape:
            q = tf.reduce_sum(self.online(s) * tf.one_hot(a, 3), axis=1)
            next_q = tf.reduce_max(self.target(s2), axis=1)
            y = r + 0.99 * next_q
            loss = tf.reduce_mean(tf.square(y - q))
        variables = {variables}
        self.opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


rng = np.random.default_rng(0)
agent = Agent()
for _ in range(2):
    s, s2 = rng.normal(size=(2, 16, 5)).astype("float32")
    agent.learn(s, rng.integers(0, 3, 16), rng.normal(size=16).astype("float32"), s2)
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_target_network_among_trained_variables_gc203(run_script, decorator):
    result = run_script(
        TARGET_NETWORK_TRAINED.format(
            keras_import="import keras", decorator=decorator, variables="self.trainable_variables"
        )
    )
    assert _codes_lines(result) == [("GC203", 23)]
    assert all(v.startswith("target/") for v in result.findings[0].variables), result.findings[0].variables


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_target_network_left_out_of_training_silent(run_script, decorator):
    result = run_script(
        TARGET_NETWORK_TRAINED.format(
            keras_import="import keras", decorator=decorator, variables="self.online.trainable_variables"
        )
    )
    assert _codes_lines(result) == []


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
@pytest.mark.parametrize(
    ("entropy", "expected"), [(ZERO_TIMES_INF, [("GC204", 18)]), (LEGAL_ONLY, [])], ids=["zero_times_inf", "legal_only"]
)
def test_tf_keras_inf_mask_constant(run_script, decorator, entropy, expected):
    source = MASKED_ENTROPY.format(
        keras_import="import tf_keras as keras", decorator=decorator, entropy=entropy, obs_value="0.5"
    )
    assert _codes_lines(run_script(source)) == expected


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
@pytest.mark.parametrize(
    ("variables", "expected"),
    [("self.trainable_variables", [("GC203", 23)]), ("self.online.trainable_variables", [])],
    ids=["target_trained", "online_only"],
)
def test_tf_keras_target_network_among_trained_variables(run_script, decorator, variables, expected):
    source = TARGET_NETWORK_TRAINED.format(
        keras_import="import tf_keras as keras", decorator=decorator, variables=variables
    )
    assert _codes_lines(run_script(source)) == expected


# -- 4. a mean teacher whose EMA weights are computed inside the tape (756) ----------------
# The teacher's prediction (a functional call with the averaged weights) is the target:
# GC203 where it is made, not at the EMA weights' line; the twin averages the weights after
# the step, outside the tape.
MEAN_TEACHER = """\
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(32, 6)).astype("float32")
student = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
opt = keras.optimizers.Adam(1e-2)
teacher_weights = [tf.identity(v) for v in student.trainable_variables]


{decorator}
def step(x, teacher_weights):
    with tf.GradientTape() as tape:
        {ema_inside}
        student_out = student(x + tf.random.normal(tf.shape(x), stddev=0.3))
        teacher_out, _ = student.stateless_call(teacher_weights, [], x + tf.random.normal(tf.shape(x), stddev=0.3))
        loss = tf.reduce_mean(tf.square(tf.nn.softmax(student_out) - tf.nn.softmax(teacher_out)))
    opt.apply_gradients(zip(tape.gradient(loss, student.trainable_variables), student.trainable_variables))
    return teacher_weights


for _ in range(2):
    teacher_weights = step(x, teacher_weights)
    {ema_after}
"""
EMA = "teacher_weights = [0.9 * t + 0.1 * s for t, s in zip(teacher_weights, student.trainable_variables)]"


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_mean_teacher_ema_in_tape_is_the_teachers_prediction(run_script, decorator):
    result = run_script(MEAN_TEACHER.format(decorator=decorator, ema_inside=EMA, ema_after="pass"))
    assert _codes_lines(result) == [("GC203", 17)]


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_mean_teacher_ema_after_step_silent(run_script, decorator):
    result = run_script(MEAN_TEACHER.format(decorator=decorator, ema_inside="pass", ema_after=EMA))
    assert _codes_lines(result) == []


# -- GC204 with two independent origins: a focal loss whose two logs both meet 0 --------
# Fixing the first log alone leaves the loss infinite, so the finding names the other line
# too (823's shape: which of the two a saturated sigmoid zeroes depends on the init).
TWO_LOGS = """\
import tensorflow as tf

w = tf.Variable([[1.0]])
x = tf.constant([[-200.0], [X1], [0.0], [3.0]])
y = tf.constant([[1.0], [0.0], [1.0], [0.0]])


{decorator}
def step():
    with tf.GradientTape() as tape:
        p = tf.sigmoid(tf.matmul(x, w))
        pt_1 = tf.where(tf.equal(y, 1), p, tf.ones_like(p))
        pt_0 = tf.where(tf.equal(y, 0), p, tf.zeros_like(p))
        pos = -tf.reduce_sum(0.25 * tf.pow(1. - pt_1, 2.0) * tf.math.log(pt_1))
        neg = -tf.reduce_sum(0.75 * tf.pow(pt_0, 2.0) * tf.math.log(1. - pt_0))
        loss = pos + neg
    return tape.gradient(loss, [w])


step()
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
@pytest.mark.parametrize(("x1", "also"), [("100.0", True), ("1.0", False)], ids=["both_logs", "one_log"])
def test_gc204_names_every_line_that_made_the_loss_non_finite(run_script, decorator, x1, also):
    result = run_script(TWO_LOGS.replace("X1", x1).format(decorator=decorator))
    assert _codes_lines(result) == [("GC204", 14)]
    (finding,) = result.findings
    notes = [note for note in finding.notes if note.startswith("line 15 is not finite either")]
    assert bool(notes) == also, finding.notes
