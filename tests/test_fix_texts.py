"""Fix texts that fit the cause (blind batch 16): a finding's fix is chosen by what the
starved source is and where its value goes, never by one script's names. Each test is the
bug eagerly and in a ``tf.function``, under Keras 3 and tf_keras where the shape exists,
and a correct look-alike that stays silent."""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

from tests.conftest import run_cli

MODES = pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
TF_KERAS = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")


def _source(template: str, **fields) -> str:
    return textwrap.dedent(template).format(**fields)


def _found(result) -> list[tuple]:
    assert result.error is None, result.error
    return [(f.code, f.line, f.variables) for f in result.findings]


def _fixes(result) -> list[str]:
    return [f.fix for f in result.findings]


def _cli(script, *args: str, env: dict | None = None) -> dict:
    proc = run_cli(str(script), "--format", "json", *args, env=env)
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    return record


# -- 1. GC108: a watched tensor the model never consumed -----------------------------------

#: a residual's derivative asked with respect to a column gathered beside the model's input
COLUMN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    inputs = tf.constant(np.random.default_rng(0).uniform(-1, 1, size=(16, 2)).astype("float32"))


    {decorator}
    def derivative():
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            y = model(inputs)
            x0 = tf.gather(inputs, [0], axis=1)
        return {gradient}


    derivative()
"""


@MODES
def test_a_gathered_column_the_model_never_consumed_gets_the_tensor_fix(run_script, decorator):
    result = run_script(_source(COLUMN, decorator=decorator, gradient="tape.gradient(y, x0)"))
    assert _found(result) == [("GC108", 14, ["x0"])]
    (fix,) = _fixes(result)
    assert "never consumed" in fix and "`model(x0)`" in fix and "slice" in fix
    assert "chain its output" not in fix  # the fix for variables does not fit a tensor


@MODES
def test_the_gradient_by_the_consumed_input_then_sliced_is_silent(run_script, decorator):
    result = run_script(_source(COLUMN, decorator=decorator, gradient="tape.gradient(y, inputs)[:, 0:1]"))
    assert _found(result) == []


#: a gradient penalty by an interpolate the critic never scored (it scores another one)
PENALTY = """\
    import keras
    import numpy as np
    import tensorflow as tf

    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    rng = np.random.default_rng(0)
    real = tf.constant(rng.normal(size=(8, 4)).astype("float32"))
    fake = tf.constant(rng.normal(size=(8, 4)).astype("float32"))


    def interpolate():
        alpha = tf.random.uniform((8, 1))
        return alpha * real + (1.0 - alpha) * fake


    {decorator}
    def penalty():
        with tf.GradientTape() as gp_tape:
            averaged = interpolate()
            gp_tape.watch(averaged)
            scored = critic({scored})
        grads = gp_tape.gradient(scored, averaged)
        return tf.reduce_mean(tf.square(tf.norm(grads, axis=1) - 1.0))


    penalty()
"""


@MODES
def test_a_penalty_by_an_interpolate_the_critic_never_scored_gets_the_tensor_fix(run_script, decorator):
    result = run_script(_source(PENALTY, decorator=decorator, scored="interpolate()"))
    found = _found(result)
    assert [(code, variables) for code, _, variables in found] == [("GC108", ["averaged"])]
    (fix,) = _fixes(result)
    assert "`critic(averaged)`" in fix and "never consumed" in fix


@MODES
def test_a_penalty_by_the_interpolate_the_critic_scored_is_silent(run_script, decorator):
    assert _found(run_script(_source(PENALTY, decorator=decorator, scored="averaged"))) == []


@MODES
def test_a_variable_never_used_keeps_the_variable_fix(run_script, decorator):
    """The tensor fix is for tensors: an unused layer still gets 'call the layer ...'."""
    source = _source(
        """\
        import keras
        import numpy as np
        import tensorflow as tf

        used = keras.layers.Dense(1)
        unused = keras.layers.Dense(1)
        x = np.ones((4, 3), "float32")
        used.build((None, 3))
        unused.build((None, 3))


        {decorator}
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(used(x))
            return tape.gradient(loss, used.trainable_variables + unused.trainable_variables)


        step()
        """,
        decorator=decorator,
    )
    result = run_script(source)
    (fix,) = _fixes(result)
    assert "chain its output into the model" in fix and "never consumed" not in fix


PENALTY_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

critic = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(1)])
rng = np.random.default_rng(0)
real = tf.constant(rng.normal(size=(8, 4)).astype("float32"))
fake = tf.constant(rng.normal(size=(8, 4)).astype("float32"))


def interpolate():
    alpha = tf.random.uniform((8, 1))
    return alpha * real + (1.0 - alpha) * fake


@tf.function
def penalty():
    with tf.GradientTape() as gp_tape:
        averaged = interpolate()
        gp_tape.watch(averaged)
        scored = critic({scored})
    grads = gp_tape.gradient(scored, averaged)
    return tf.reduce_mean(tf.square(tf.norm(grads, axis=1) - 1.0))


penalty()
"""


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("scored", ["interpolate()", "averaged"], ids=["another", "same"])
def test_a_penalty_interpolate_under_tf_keras(tmp_path, scored):
    script = tmp_path / "penalty.py"
    script.write_text(PENALTY_TF_KERAS.format(scored=scored), encoding="utf-8")
    record = _cli(script, env={"TF_USE_LEGACY_KERAS": "1"})
    if scored == "averaged":
        assert record["findings"] == []
    else:
        assert [(f["code"], f["variables"]) for f in record["findings"]] == [("GC108", ["averaged"])]
        assert "`critic(averaged)`" in record["findings"][0]["fix"]


# -- 2. GC101: ids one network makes used as another network's labels ----------------------

#: a labeller's argmax used as the labels of a classifier's loss; both asked for gradients
LABELS = """\
    import keras
    import numpy as np
    import tensorflow as tf

    classifier = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4, name="c")], name="classifier")
    labeller = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="l")], name="labeller")
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(16, 6)).astype("float32"))
    hints = tf.constant(rng.normal(size=(16, 3)).astype("float32"))
    targets = tf.constant(rng.integers(0, 4, size=16).astype("int32"))
    variables = classifier.trainable_variables + labeller.trainable_variables


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            scores = labeller(hints)
            labels = tf.argmax(scores, axis=-1, output_type=tf.int32)
            loss = tf.reduce_mean({loss})
        return tape.gradient(loss, variables)


    step()
"""
SPARSE = "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=classifier(x))"
Y_TRUE = "keras.losses.sparse_categorical_crossentropy(labels, classifier(x), from_logits=True)"
OWN_LOSS = SPARSE + ") + tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=scores)"


@MODES
@pytest.mark.parametrize("loss", [SPARSE, Y_TRUE], ids=["sparse-ce", "y_true"])
def test_ids_used_as_another_networks_labels_get_the_labels_fix(run_script, decorator, loss):
    result = run_script(_source(LABELS, decorator=decorator, loss=loss))
    assert _found(result) == [("GC101", 18, ["labeller/l/bias", "labeller/l/kernel"])]
    (fix,) = _fixes(result)
    assert "own differentiable loss" in fix and "backpropagates into its labels" in fix
    assert "Q-learning" not in fix  # the fix for ids selecting values does not fit labels


@MODES
def test_a_labeller_with_its_own_loss_is_silent(run_script, decorator):
    assert _found(run_script(_source(LABELS, decorator=decorator, loss=OWN_LOSS))) == []


@MODES
def test_ids_looking_up_another_networks_table_keep_the_indices_fix(run_script, decorator):
    """argmax ids that look up rows of a variable (an embedding of a token GAN): not labels,
    the fix that passes probabilities on instead of ids fits."""
    loss = "tf.square(tf.gather(classifier.layers[0].kernel, labels, axis=1))"
    result = run_script(_source(LABELS, decorator=decorator, loss=loss))
    assert [code for code, _, _ in _found(result)] == ["GC101", "GC108"]  # GC108: the bias, never read
    fix = result.findings[0].fix
    assert "soft one-hot" in fix and "own differentiable loss" not in fix


LABELS_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

classifier = keras.Sequential([keras.layers.Dense(4, input_shape=(6,), name="c")], name="classifier")
labeller = keras.Sequential([keras.layers.Dense(4, input_shape=(3,), name="l")], name="labeller")
rng = np.random.default_rng(0)
x = tf.constant(rng.normal(size=(16, 6)).astype("float32"))
hints = tf.constant(rng.normal(size=(16, 3)).astype("float32"))
variables = classifier.trainable_variables + labeller.trainable_variables


@tf.function
def step():
    with tf.GradientTape() as tape:
        labels = tf.argmax(labeller(hints), axis=-1, output_type=tf.int32)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, classifier(x), from_logits=True))
    return tape.gradient(loss, {asked})


step()
"""


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("asked", ["variables", "classifier.trainable_variables"], ids=["both", "classifier"])
def test_ids_as_labels_under_tf_keras(tmp_path, asked):
    script = tmp_path / "labels.py"
    script.write_text(LABELS_TF_KERAS.format(asked=asked), encoding="utf-8")
    record = _cli(script, env={"TF_USE_LEGACY_KERAS": "1"})
    if asked != "variables":
        assert record["findings"] == []
    else:
        assert [(f["code"], f["line"]) for f in record["findings"]] == [("GC101", 16)]
        assert "own differentiable loss" in record["findings"][0]["fix"]


# -- 3. issue 36 §2: GC108 under `fit` where a functional model drops a layer's value -------

#: a readout that pools the features a message-passing layer passes on, not the ones it updates
READOUT = """\
    import keras
    import numpy as np
    import tensorflow as tf


    class MessagePassing(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.message = keras.layers.Dense(8)
            self.update = keras.layers.Dense(8, activation="tanh")

        def call(self, nodes):
            messages = self.message(nodes)
            updated = self.update(messages)
            return nodes, updated


    class Readout(keras.layers.Layer):
        def call(self, graph):
            {read}


    inputs = keras.Input((5, 8))
    pooled = Readout()(MessagePassing()(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
    model.compile(optimizer="sgd", loss="mse", run_eagerly={eagerly})
    model.fit(np.ones((8, 5, 8), "float32"), np.ones((8, 1), "float32"), epochs=1, verbose=0)
"""
DROPS = "features, _ = graph\n        return tf.reduce_mean(features, axis=1)"
POOLS = "features, updated = graph\n        return tf.reduce_mean(updated, axis=1)"
FIT_MODES = pytest.mark.parametrize("eagerly", [True, False], ids=["eager", "tf.function"])


@FIT_MODES
def test_a_value_a_functional_model_drops_under_fit_is_where_it_was_made(run_script, eagerly):
    result = run_script(_source(READOUT, read=DROPS, eagerly=eagerly))
    assert result.error is None, result.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in result.findings] == [("GC108", 14, "dead-end")]
    assert "`updated`" in result.findings[0].fix


@FIT_MODES
def test_a_readout_pooling_the_updated_features_is_silent(run_script, eagerly):
    assert _found(run_script(_source(READOUT, read=POOLS, eagerly=eagerly))) == []


READOUT_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class MessagePassing(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.message = keras.layers.Dense(8)
        self.update_dense = keras.layers.Dense(8, activation="tanh")

    def call(self, nodes):
        messages = self.message(nodes)
        updated = self.update_dense(messages)
        return nodes, updated


class Readout(keras.layers.Layer):
    def call(self, graph):
        {read}


inputs = keras.Input((5, 8))
pooled = Readout()(MessagePassing()(inputs))
model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
model.compile(optimizer="sgd", loss="mse")
model.fit(np.ones((8, 5, 8), "float32"), np.ones((8, 1), "float32"), epochs=1, verbose=0)
"""


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("read", [DROPS, POOLS], ids=["drops", "pools"])
def test_a_functional_model_dropping_a_value_under_tf_keras_fit(tmp_path, read):
    script = tmp_path / "readout.py"
    script.write_text(READOUT_TF_KERAS.format(read=read), encoding="utf-8")
    record = _cli(script, env={"TF_USE_LEGACY_KERAS": "1"})
    found = [(f["code"], f["line"]) for f in record["findings"]]
    assert found == ([("GC108", 14)] if read == DROPS else [])


# -- 4. issue 36 §2: a wrong source list built by a filter, a slice or a concatenation ------

SOURCE_LIST = """\
    import keras
    import numpy as np
    import tensorflow as tf

    states = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="pi")], name="actor")
    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="v")], name="critic")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(tf.nn.log_softmax(actor(states))[:, 0])
        variables = {sources}
        return tape.gradient(loss, variables)


    step()
"""
WRONG_LISTS = {
    "name-filter": '[v for v in actor.trainable_variables + critic.trainable_variables if "v/" in v.path]',
    "slice": "(actor.trainable_variables + critic.trainable_variables)[2:]",
    "concatenation": "critic.trainable_variables[:1] + critic.trainable_variables[1:]",
}


@MODES
@pytest.mark.parametrize("built", list(WRONG_LISTS))
def test_a_wrong_source_list_is_reported_where_it_was_built(run_script, decorator, built):
    result = run_script(_source(SOURCE_LIST, decorator=decorator, sources=WRONG_LISTS[built]))
    assert _found(result) == [("GC108", 14, ["critic/v/bias", "critic/v/kernel"])]


@MODES
def test_a_filter_that_keeps_the_trained_models_variables_is_silent(run_script, decorator):
    sources = '[v for v in actor.trainable_variables + critic.trainable_variables if "pi/" in v.path]'
    assert _found(run_script(_source(SOURCE_LIST, decorator=decorator, sources=sources))) == []


# -- GC102: a rounded learned position used as indices (batch 17's 1096, a spatial transformer) --

SHIFT = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
locator = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
table = tf.constant(np.arange(32, dtype="float32").reshape(1, 32) / 32.0)
x = np.random.default_rng(0).random((4, 8), dtype="float32")


{decorator}
def step(x):
    with tf.GradientTape() as tape:
        pos = 15.0 + 10.0 * tf.tanh(locator(x))[:, 0]
        {sample}
        loss = tf.reduce_mean(tf.square(picked - 0.25))
    return tape.gradient(loss, locator.trainable_variables)


step(x)
"""
NEAREST = "picked = tf.gather(table[0], tf.cast(tf.round(pos), tf.int32))"
LINEAR = (
    "lower = tf.floor(pos); frac = pos - lower; i = tf.cast(lower, tf.int32); "
    "picked = (1 - frac) * tf.gather(table[0], i) + frac * tf.gather(table[0], i + 1)"
)


@MODES
def test_a_rounded_position_used_as_indices_gets_the_interpolation_fix(run_script, decorator):
    result = run_script(SHIFT.format(decorator=decorator, sample=NEAREST))
    assert result.error is None, result.error
    (finding,) = result.findings
    assert (finding.code, finding.line) == ("GC102", 15)
    assert "interpolate" in finding.fix.lower() and "stop_gradient" not in finding.fix
    # the interpolated lookup trains the locator through its fractional weights
    assert run_script(SHIFT.format(decorator=decorator, sample=LINEAR)).findings == []


@MODES
def test_a_rounded_value_not_used_as_indices_keeps_the_straight_through_fix(run_script, decorator):
    source = SHIFT.format(decorator=decorator, sample="picked = tf.round(pos) / 32.0")
    (finding,) = run_script(source).findings
    assert finding.code == "GC102" and "stop_gradient" in finding.fix


# -- GC109: the trained model's forward pass under tape.stop_recording() (batch 17's 1086) --

PAUSED = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
student = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
teacher = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
x = np.random.default_rng(0).random((8, 4), dtype="float32")


{decorator}
def step(x):
    with tf.GradientTape() as tape:
        with tape.stop_recording():
            target = teacher(x)
            {paused}
        {recorded}
        loss = tf.reduce_mean(tf.square(pred - target))
    return tape.gradient(loss, student.trainable_variables)


step(x)
"""


@MODES
def test_a_forward_pass_under_stop_recording_gets_the_paused_fix(run_script, decorator):
    result = run_script(PAUSED.format(decorator=decorator, paused="pred = student(x)", recorded="pass"))
    assert result.error is None, result.error
    (finding,) = result.findings
    assert (finding.code, finding.line) == ("GC109", 16)
    assert "stop_recording" in finding.message and "stop_recording()" in finding.fix
    # the teacher alone under stop_recording: the student trains
    twin = PAUSED.format(decorator=decorator, paused="pass", recorded="pred = student(x)")
    assert run_script(twin).findings == []
