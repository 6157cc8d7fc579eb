"""Issue 36 §2: a finding points at the line the user changes and names the cause, on code
nobody here has seen. Each test is a mechanism (where a finding points, how a cause is
named, what a source list is), with a correct look-alike that stays silent, eagerly and in
a ``tf.function`` where both apply."""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

from tests.conftest import run_cli

MODES = pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])


def _source(template: str, **fields) -> str:
    return textwrap.dedent(template).format(**fields)


def _found(result) -> list[tuple]:
    assert result.error is None, result.error
    return [(f.code, f.line, f.variables) for f in result.findings]


# -- 1. the source list is the mistake --------------------------------------------------

DISTILL = """\
    import keras
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = rng.integers(0, 3, size=(32,))
    teacher = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3, name="t")], name="teacher")
    student = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3, name="s")], name="student")
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    kl = keras.losses.KLDivergence()
    opt = keras.optimizers.SGD(0.01)


    {decorator}
    def step():
        soft = teacher(x, training=False)
        with tf.GradientTape() as tape:
            logits = student(x, training=True)
            loss = ce(y, logits) + kl(tf.nn.softmax(soft / {temperature}), tf.nn.softmax(logits / {temperature}))
        variables = {sources}
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))


    for _ in range(2):
        step()
    """
TEACHER = ["teacher/t/bias", "teacher/t/kernel"]


@MODES
def test_a_teacher_run_before_the_tape_on_purpose_is_a_wrong_source_list(run_script, decorator):
    """The teacher's output is only the soft target the student's prediction is compared
    with: running it before the tape is the program's intent, so the teacher's variables in
    the request are the mistake (GC108 at the list, line 21), not its call (GC109 at 17)."""
    # a temperature of its own per mode: autograph reuses the conversion of an equal code object
    source = _source(
        DISTILL,
        decorator=decorator,
        temperature=2.0 if decorator else 3.0,
        sources="teacher.trainable_variables + student.trainable_variables",
    )
    result = run_script(source)
    assert _found(result) == [("GC108", 21, TEACHER)]
    (finding,) = result.findings
    assert any("line 17" in note and "target" in note for note in finding.notes)
    assert "trainable = False" in finding.fix


@MODES
def test_a_distiller_asking_for_the_students_variables_is_silent(run_script, decorator):
    source = _source(
        DISTILL,
        decorator=decorator,
        temperature=4.0 if decorator else 5.0,
        sources="student.trainable_variables",
    )
    assert _found(run_script(source)) == []


GAN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    real = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="discriminator")
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    d_opt = keras.optimizers.Adam(1e-3)
    g_opt = keras.optimizers.Adam(1e-3)


    {decorator}
    def step():
        z = tf.random.normal((16, 2))
        fake = generator(z)
        with tf.GradientTape() as d_tape:
            d_loss = bce(tf.ones((16, 1)), discriminator(real)) + bce(tf.zeros((16, 1)), discriminator(fake * {scale}))
        d_grads = d_tape.gradient(d_loss, {sources})
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        with tf.GradientTape() as g_tape:
            g_loss = bce(tf.ones((16, 1)), discriminator(generator(z)))
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))


    for _ in range(2):
        step()
    """


@MODES
def test_another_models_variables_asked_of_a_tape_that_trains_one_model_is_the_source_list(run_script, decorator):
    """The discriminator's step asks for the generator's variables: the generator ran before
    this tape (its images are made there on purpose) and the tape trains the discriminator,
    which the request leaves out. GC108 at the sources argument, not GC109 at the generator."""
    scale = 1.0 if decorator else 2.0
    result = run_script(_source(GAN, decorator=decorator, scale=scale, sources="generator.trainable_variables"))
    assert _found(result) == [("GC108", 19, ["generator/g/bias", "generator/g/kernel"])]
    (finding,) = result.findings
    line = "d_grads = d_tape.gradient(d_loss, generator.trainable_variables)"
    assert finding.column == 4 + line.index("generator") + 1  # the argument, not the call
    assert any("line 16" in note for note in finding.notes)


@MODES
def test_a_gan_asking_each_tape_for_its_own_models_variables_is_silent(run_script, decorator):
    scale = 3.0 if decorator else 4.0
    result = run_script(_source(GAN, decorator=decorator, scale=scale, sources="discriminator.trainable_variables"))
    assert _found(result) == []


ENCODER_BEFORE = """\
    import keras
    import numpy as np
    import tensorflow as tf

    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    y = np.zeros((16, 1), "float32")
    encoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="enc")], name="encoder")
    head = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, name="head")], name="head")


    {decorator}
    def step():
        h = encoder(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((head(h) - y) ** {power})
        return tape.gradient(loss, encoder.trainable_variables + head.trainable_variables)


    step()
    """


@MODES
def test_an_encoder_run_before_the_tape_that_feeds_the_prediction_is_still_gc109(run_script, decorator):
    """The look-alike the mechanism must not take: the model before the tape feeds the
    prediction (the head's input), not a target, and the request asks for the tape's own
    model too. Moving it into the tape is the fix: GC109 at its call."""
    result = run_script(_source(ENCODER_BEFORE, decorator=decorator, power=2 if decorator else 4))
    assert _found(result) == [("GC109", 13, ["encoder/enc/bias", "encoder/enc/kernel"])]


DISTILL_FIT = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher, self.student = teacher, student

    def call(self, x):
        return self.student(x)

    def train_step(self, data):
        x, y = data
        soft = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            logits = self.student(x, training=True)
            loss = tf.reduce_mean(tf.square(tf.nn.softmax(soft) - tf.nn.softmax(logits)))
        trainable_vars = self.trainable_variables
        grads = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(grads, trainable_vars))
        return {"loss": loss}


teacher = keras.Sequential([keras.layers.Dense(3, input_shape=(6,), name="t")], name="teacher")
student = keras.Sequential([keras.layers.Dense(3, input_shape=(6,), name="s")], name="student")
model = Distiller(student, teacher)
model.compile(optimizer="sgd")
model.fit(np.random.rand(32, 6).astype("float32"), np.zeros((32,)), epochs=1, batch_size=16, verbose=0)
"""


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
def test_a_teacher_before_the_tape_in_a_tf_keras_train_step_is_the_source_list(tmp_path):
    """The same mechanism under tf_keras (``fit``'s traced ``train_step``, a squared error
    between the soft targets and the student's probabilities)."""
    script = tmp_path / "distill_fit.py"
    script.write_text(DISTILL_FIT, encoding="utf-8")
    proc = run_cli(str(script), "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    assert [(f["code"], f["line"], sorted(f["variables"])) for f in record["findings"]] == [
        ("GC108", 20, ["t/bias", "t/kernel"])
    ]


NEVER_RUN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    states = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="pi")], name="actor")
    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="v")], name="critic")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(tf.nn.log_softmax(actor(states))[:, 0]) * {scale}
        variables = {sources}
        return tape.gradient(loss, variables)


    step()
    """


@MODES
def test_a_list_of_a_model_the_tape_never_ran_points_at_where_the_list_was_built(run_script, decorator):
    """The tape trains the actor; the list names the critic, which never ran: the line to
    change is the statement that built the list (14), not the request (15)."""
    scale = 1.0 if decorator else 2.0
    result = run_script(_source(NEVER_RUN, decorator=decorator, scale=scale, sources="critic.trainable_variables"))
    assert _found(result) == [("GC108", 14, ["critic/v/bias", "critic/v/kernel"])]


@MODES
def test_a_list_of_the_tapes_own_model_is_silent(run_script, decorator):
    scale = 3.0 if decorator else 4.0
    result = run_script(_source(NEVER_RUN, decorator=decorator, scale=scale, sources="actor.trainable_variables"))
    assert _found(result) == []


# -- 2. integers written into a variable --------------------------------------------------

PASTE = """\
    import numpy as np
    import tensorflow as tf

    x = np.random.default_rng(0).normal(size=(3, 2)).astype("float32")
    w = tf.Variable(tf.ones((2, 2)) * 0.3, name="w")
    canvas = tf.Variable(tf.ones((3, 8)), name="canvas")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            corners = tf.sigmoid(tf.matmul(x, w)) * {scale}
            cells = {cells}
            for i in range(3):
                canvas[i, cells[i, 0] : cells[i, 0] + 2].assign(tf.zeros((2,)))
            loss = tf.reduce_sum(canvas * 2.0)
        return tape.gradient(loss, [w])


    step()
    """


@MODES
def test_integer_slice_bounds_of_a_variable_write_are_cut_where_they_became_integers(run_script, decorator):
    """``canvas[i, a:b].assign(...)`` with bounds cast from the model's floats: the values
    written do not depend on ``w``, its only way to the loss is where the write goes, and
    that was cut at the cast (GC103 at 13), not a source the loss never uses (GC108)."""
    scale = 4.0 if decorator else 5.0
    result = run_script(_source(PASTE, decorator=decorator, scale=scale, cells="tf.cast(corners, tf.int32)"))
    assert _found(result) == [("GC103", 13, ["w"])]


@MODES
def test_a_variable_write_at_fixed_bounds_is_silent(run_script, decorator):
    """The look-alike: the same write at constant bounds, and ``w`` reaching the loss as a float."""
    scale = 2.0 if decorator else 3.0
    source = _source(PASTE, decorator=decorator, scale=scale, cells="tf.ones((3, 2), tf.int32)")
    source = source.replace(
        "loss = tf.reduce_sum(canvas * 2.0)", "loss = tf.reduce_sum(canvas * 2.0) + tf.reduce_sum(corners)"
    )
    assert _found(run_script(source)) == []


# -- 3. a crash that is the host escape's consequence -----------------------------------

CRASH_IN_TAPE = """\
    import keras
    import numpy as np
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d")], name="m")
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    with tf.GradientTape() as tape:
        pred = {escape}
        order = np.argsort(pred.numpy().flatten())
        loss = tf.reduce_sum(pred)
    grads = tape.gradient(loss, model.trainable_variables)
    """


@pytest.mark.parametrize("escape", ["np.maximum(model(x), 0)", "model.predict(x, verbose=0)"], ids=["numpy", "predict"])
def test_a_numpy_value_from_the_tape_that_crashes_the_next_line_is_gc105(run_script, escape):
    """The escape (line 8) turns the forward output into an ndarray inside the tape; the
    program then fails on it (line 9) before its gradient request, under python too. The
    failure is the escape's consequence: GC105 at the escape, the error in a note."""
    result = run_script(_source(CRASH_IN_TAPE, escape=escape))
    assert _found(result) == [("GC105", 8, ["m/d/bias", "m/d/kernel"])]
    assert any("line 9" in n and "no attribute 'numpy'" in n for n in result.findings[0].notes)


def test_numpy_after_the_tape_is_silent(run_script):
    source = _source(CRASH_IN_TAPE, escape="model(x)")
    source = source.replace("        order = np.argsort(pred.numpy().flatten())\n", "")
    source += "order = np.argsort(pred.numpy().flatten())\n"
    assert _found(run_script(source)) == []


def test_another_failure_inside_a_tape_stays_the_programs_own(run_script):
    """A `.numpy()` for a log line inside the tape, then a failure of another kind: no
    escape caused it, so it is the script's failure (GC901), not a GC105."""
    source = _source(CRASH_IN_TAPE, escape="model(x)")
    source = source.replace(
        "order = np.argsort(pred.numpy().flatten())", "print(pred.numpy().sum()); np.zeros(3).reshape(2, 2)"
    )
    result = run_script(source)
    assert result.findings == []
    assert result.error is not None and result.error.code == "GC901"


PREDICT_IN_FIT = """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="b")], name="body")
        self.head = keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.body(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            h = {h}
            loss = tf.reduce_mean((self.head(h) - y) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}


model = Net()
model.compile(optimizer="sgd", run_eagerly={eagerly})
model.fit(np.random.rand(32, 4).astype("float32"), np.zeros((32, 1), "float32"), epochs=1, batch_size=16, verbose=0)
"""


@pytest.mark.parametrize("eagerly", [True, False], ids=["run_eagerly", "traced"])
def test_predict_inside_fits_train_step_is_gc105(run_script, eagerly):
    """``predict`` inside ``fit``'s ``train_step`` raises under python (a distribution
    strategy's cross-replica RuntimeError when run eagerly): GC105 at the ``predict``."""
    result = run_script(PREDICT_IN_FIT.format(h="self.body.predict(x, verbose=0)", eagerly=eagerly))
    assert _found(result) == [("GC105", 18, ["body/b/bias", "body/b/kernel"])]


@pytest.mark.parametrize("eagerly", [True, False], ids=["run_eagerly", "traced"])
def test_the_sub_model_called_inside_fits_train_step_is_silent(run_script, eagerly):
    assert _found(run_script(PREDICT_IN_FIT.format(h="self.body(x)", eagerly=eagerly))) == []


# -- 4. ranking of cuts: a stopped TD target is intent ----------------------------------

DQN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    online = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="q")], name="online")
    rng = np.random.default_rng(3)
    states = rng.normal(size=(16, 4)).astype("float32")
    next_states = rng.normal(size=(16, 4)).astype("float32")
    actions = rng.integers(0, 3, size=16)
    rewards = rng.normal(size=16).astype("float32")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            q = online(states)
            q = {q}
            td_target = tf.stop_gradient(rewards + {gamma} * tf.reduce_max(online(next_states), axis=1))
            q_taken = tf.reduce_sum(q * tf.one_hot(actions, 3), axis=1)
            loss = tf.reduce_mean(tf.square(td_target - q_taken))
        return tape.gradient(loss, online.trainable_variables)


    step()
    """


@MODES
def test_an_integer_op_on_the_prediction_outranks_the_stopped_td_target(run_script, decorator):
    """Both paths of the online network are cut: the prediction by an argsort (the bug,
    line 17) and the TD target by its `tf.stop_gradient` (the program's intent, 18). The
    finding is the argsort's, not GC104 at the stop."""
    gamma = 0.9 if decorator else 0.8
    result = run_script(_source(DQN, decorator=decorator, gamma=gamma, q="tf.cast(tf.argsort(q), q.dtype)"))
    assert [(code, line) for code, line, _ in _found(result)] == [("GC101", 17)]
    assert result.findings[0].variables == ["online/q/bias", "online/q/kernel"]


@MODES
def test_a_dqn_with_its_stopped_td_target_is_silent(run_script, decorator):
    gamma = 0.7 if decorator else 0.6
    assert _found(run_script(_source(DQN, decorator=decorator, gamma=gamma, q="q * 1.0"))) == []


# -- 5. an empty target: no loss at all ---------------------------------------------------

EMPTY_TARGET = """\
    import keras
    import numpy as np
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="m")
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) ** 2) * {scale}
        return tape.gradient({target}, model.trainable_variables)


    step()
    """


@MODES
def test_gradients_of_an_empty_model_losses_name_the_request(run_script, decorator):
    """``model.losses`` holds no loss (no layer adds one): the target is empty. GC108 at the
    request (13), not a host escape at the model's call."""
    scale = 1.0 if decorator else 2.0
    result = run_script(_source(EMPTY_TARGET, decorator=decorator, scale=scale, target="model.losses"))
    assert _found(result) == [("GC108", 13, ["m/d/bias", "m/d/kernel"])]
    assert "empty" in result.findings[0].notes[0] and "model.losses" in result.findings[0].fix


@MODES
def test_gradients_of_the_loss_are_silent(run_script, decorator):
    scale = 3.0 if decorator else 4.0
    assert _found(run_script(_source(EMPTY_TARGET, decorator=decorator, scale=scale, target="loss"))) == []
