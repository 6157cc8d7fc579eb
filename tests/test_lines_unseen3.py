"""Issue 36 §2, round 4: the line a user changes, on code nobody here has seen. Each test is
a mechanism (how a cause is named, where a finding points), with a correct look-alike that
stays silent, eagerly and in a ``tf.function``, under Keras 3 and tf_keras where the shape
exists there."""

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


def _cli_found(script, *args: str, env: dict | None = None) -> tuple[list[tuple], dict]:
    proc = run_cli(str(script), "--format", "json", *args, env=env)
    (record,) = json.loads(proc.stdout)["files"]
    return [(f["code"], f["line"], f["variables"]) for f in record["findings"]], record


# -- 1. a forward pass hoisted above two tapes opened in one `with` ------------------------

TWO_TAPES = """\
    import keras
    import numpy as np
    import tensorflow as tf

    generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="discriminator")
    real = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))
    d_opt = keras.optimizers.SGD(1e-3)
    g_opt = keras.optimizers.SGD(1e-3)


    {decorator}
    def step(z):
        {before}
        with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:
            {inside}
            d_loss = tf.reduce_mean(discriminator(fake)) - tf.reduce_mean(discriminator(real))
            g_loss = -tf.reduce_mean(discriminator(fake)) * {scale}
        d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))


    for _ in range(2):
        step(tf.random.normal((8, 2)))
    """

GENERATOR = ["generator/g/bias", "generator/g/kernel"]


@MODES
def test_a_forward_pass_hoisted_above_two_tapes_opened_together_is_gc109(run_script, decorator):
    """biggan's ``fake = self.generator(...)`` moved above ``with tf.GradientTape() as d_tape,
    tf.GradientTape() as g_tape:``. The generator tape's request names the generator, whose
    output the tapes consume: the request is right, the call ran too early. GC109 at the
    hoisted call (line 14), not GC108 at the request (line 20): tapes opened together are
    there to train a model each, so "the tape trains another model" is no reading here."""
    source = _source(
        TWO_TAPES, decorator=decorator, before="fake = generator(z)", inside="pass", scale=2.0 if decorator else 3.0
    )
    assert _found(run_script(source)) == [("GC109", 14, GENERATOR)]


@MODES
def test_two_tapes_with_the_forward_pass_inside_are_silent(run_script, decorator):
    source = _source(
        TWO_TAPES, decorator=decorator, before="pass", inside="fake = generator(z)", scale=4.0 if decorator else 5.0
    )
    assert _found(run_script(source)) == []


ONE_TAPE_WRONG_LIST = """\
    import keras
    import numpy as np
    import tensorflow as tf

    generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="discriminator")
    real = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))


    {decorator}
    def step(z):
        fake = generator(z)
        with tf.GradientTape() as d_tape:
            d_loss = tf.reduce_mean(discriminator(fake)) - tf.reduce_mean(discriminator(real)) * {scale}
        with tf.GradientTape() as g_tape:
            g_loss = -tf.reduce_mean(discriminator(generator(z)))
        return d_tape.gradient(d_loss, generator.trainable_variables), g_tape.gradient(g_loss, generator.trainable_variables)


    step(tf.random.normal((8, 2)))
    """


@MODES
def test_tapes_opened_one_after_the_other_keep_the_wrong_source_list(run_script, decorator):
    """The look-alike the mechanism must not take: one tape per `with`, the generator run
    before the discriminator's on purpose, whose request names the generator. The source
    list stays the mistake (GC108 at line 17's sources), as test_lines_unseen's GAN."""
    source = _source(ONE_TAPE_WRONG_LIST, decorator=decorator, scale=2.0 if decorator else 3.0)
    assert _found(run_script(source)) == [("GC108", 17, GENERATOR)]


SEPARATE_STEPS = """\
    import keras
    import numpy as np
    import tensorflow as tf

    generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="discriminator")
    real = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))


    {decorator}
    def step(z):
        fake = generator(z)
        with tf.GradientTape() as d_tape:
            d_loss = tf.reduce_mean(discriminator(fake)) - tf.reduce_mean(discriminator(real))
        d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
        with tf.GradientTape() as g_tape:
            g_loss = -tf.reduce_mean(discriminator({fake})) * {scale}
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        return d_grads, g_grads


    step(tf.random.normal((8, 2)))
    """


@MODES
def test_a_generator_step_reusing_images_made_before_both_tapes_is_gc109(run_script, decorator):
    """The generator's images made once, before the discriminator's tape, and reused by the
    generator's own tape (hoist_forward in a GAN with one tape per step). The model that
    tape read (the discriminator) is what the earlier request trains: the generator's tape
    is the generator's, and its forward pass ran too early. GC109 at line 12."""
    source = _source(SEPARATE_STEPS, decorator=decorator, fake="fake", scale=2.0 if decorator else 3.0)
    assert _found(run_script(source)) == [("GC109", 12, GENERATOR)]


@MODES
def test_a_generator_step_calling_the_generator_in_its_tape_is_silent(run_script, decorator):
    source = _source(SEPARATE_STEPS, decorator=decorator, fake="generator(z)", scale=4.0 if decorator else 5.0)
    assert _found(run_script(source)) == []


GAN_FIT_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class GAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.generator = keras.Sequential([keras.layers.Dense(4, input_shape=(2,), name="g")], name="generator")
        self.discriminator = keras.Sequential([keras.layers.Dense(1, input_shape=(4,), name="d")], name="discriminator")

    def compile(self):
        super().compile()
        self.d_opt = keras.optimizers.SGD(1e-3)
        self.g_opt = keras.optimizers.SGD(1e-3)

    def train_step(self, real):
        z = tf.random.normal((tf.shape(real)[0], 2))
        {before}
        with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:
            {inside}
            d_loss = tf.reduce_mean(self.discriminator(fake)) - tf.reduce_mean(self.discriminator(real))
            g_loss = -tf.reduce_mean(self.discriminator(fake))
        d_grads = d_tape.gradient(d_loss, self.discriminator.trainable_variables)
        g_grads = g_tape.gradient(g_loss, self.generator.trainable_variables)
        self.d_opt.apply_gradients(zip(d_grads, self.discriminator.trainable_variables))
        self.g_opt.apply_gradients(zip(g_grads, self.generator.trainable_variables))
        return {{"d_loss": d_loss}}


gan = GAN()
gan.compile()
gan.fit(np.random.default_rng(0).normal(size=(16, 4)).astype("float32"), batch_size=8, epochs=1, verbose=0)
"""


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("hoisted", [True, False], ids=["hoisted", "inside"])
def test_a_hoisted_generator_in_a_tf_keras_train_step(tmp_path, hoisted):
    forward = "fake = self.generator(z)"
    script = tmp_path / "gan_fit.py"
    script.write_text(
        GAN_FIT_TF_KERAS.format(before=forward if hoisted else "pass", inside="pass" if hoisted else forward),
        encoding="utf-8",
    )
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == ([("GC109", 19, ["g/bias", "g/kernel"])] if hoisted else [])


# -- 2. a request whose gradients are applied to another model's variables -----------------

APPLIED = """\
    import keras
    import numpy as np
    import tensorflow as tf

    generator = keras.Sequential([keras.Input(({width},)), keras.layers.Dense(4, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4, name="d")], name="discriminator")
    real = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))
    d_opt = keras.optimizers.SGD(1e-3)


    {decorator}
    def step(z):
        with tf.GradientTape() as d_tape:
            fake = generator(z)
            d_loss = tf.reduce_mean(discriminator(fake)) - tf.reduce_mean(discriminator(real)) * {scale}
            d_grads = d_tape.gradient(d_loss, {asked}.trainable_variables)
            {inside}
        {outside}
        return d_loss


    for _ in range(2):
        step(tf.random.normal((8, {width})))
    """

APPLY = "d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))"
DISCRIMINATOR = ["discriminator/d/bias", "discriminator/d/kernel"]


def _applied(decorator, asked, width, inside=False, scale=1.0):
    return _source(
        APPLIED,
        decorator=decorator,
        asked=asked,
        width=width,
        inside=APPLY if inside else "pass",
        outside="pass" if inside else APPLY,
        scale=scale,
    )


@MODES
def test_gradients_of_one_model_applied_to_another_with_other_shapes(run_script, decorator):
    """``wrong_model_vars`` where python crashes at the update (Incompatible shapes), and
    gradcheck, which skips the update, said "No findings". The request's sources are the
    line to change: GC108 at the list (line 16), with the update and its crash in notes."""
    result = run_script(_applied(decorator, "generator", 2, scale=2.0 if decorator else 3.0))
    assert _found(result) == [("GC108", 16, ["generator/g/bias", "generator/g/kernel"])]
    (finding,) = result.findings
    assert "applies" in finding.message
    assert any("line 18" in note and "discriminator/d/bias" in note for note in finding.notes)
    assert any("shapes differ" in note for note in finding.notes)


@MODES
def test_gradients_of_one_model_applied_to_another_with_the_same_shapes(run_script, decorator):
    """Same shapes: python runs, trains the discriminator with the generator's gradients and
    says nothing. The tape read the discriminator for this loss and the request left it out:
    GC108 at the list all the same, without the crash note."""
    result = run_script(_applied(decorator, "generator", 4, scale=4.0 if decorator else 5.0))
    assert _found(result) == [("GC108", 16, ["generator/g/bias", "generator/g/kernel"])]
    assert not any("shapes differ" in note for note in result.findings[0].notes)


@pytest.mark.parametrize("asked", ["generator", "discriminator"])
def test_an_update_inside_the_tape_that_crashes_keeps_the_finding(run_script, asked):
    """biggan applies inside the tapes, where an update runs under gradcheck too: with the
    generator's gradients python's crash happens under the check as well; the finding made
    at the update stands. With the discriminator's (correct), silent."""
    result = run_script(_applied("", asked, 2, inside=True, scale=6.0))
    assert _found(result) == (
        [("GC108", 16, ["generator/g/bias", "generator/g/kernel"])] if asked == "generator" else []
    )


@MODES
def test_gradients_applied_to_the_variables_they_were_asked_for_are_silent(run_script, decorator):
    assert _found(run_script(_applied(decorator, "discriminator", 2, scale=7.0 if decorator else 8.0))) == []


ALL_VARIABLES = """\
    import keras
    import numpy as np
    import tensorflow as tf

    layers = [keras.layers.Dense(3), keras.layers.BatchNormalization(), keras.layers.Dense(3), keras.layers.Dense(1)]
    model = keras.Sequential([keras.Input((4,)), *layers])
    opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True))) * {scale}
        grads = tape.gradient(loss, model.variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


    step()
    """


@MODES
def test_a_list_with_extra_variables_applied_to_the_trainable_ones_is_gc115_only(run_script, decorator):
    """``model.variables`` asked for, then zipped with ``trainable_variables``: the update
    pairs gradients with the wrong variables, but all of them were asked for. That is the
    moving statistics in the list (GC115), not another model's variables (no GC108)."""
    result = run_script(_source(ALL_VARIABLES, decorator=decorator, scale=2.0 if decorator else 3.0))
    assert {f[0] for f in _found(result)} == {"GC115"}


A3C = """\
    import keras
    import numpy as np
    import tensorflow as tf

    def net():
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])

    global_net, local_net = net(), net()
    opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))


    {decorator}
    def worker_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(local_net(x))) * {scale}
        grads = tape.gradient(loss, local_net.trainable_variables)
        opt.apply_gradients(zip(grads, global_net.trainable_variables))


    worker_step()
    """


@MODES
def test_a_workers_gradients_applied_to_the_global_network_are_silent(run_script, decorator):
    """The look-alike: A3C's worker computes its gradients on a local copy and applies them
    to the global network, on purpose. Same shapes, and the tape never read the global
    network's variables: nothing to say."""
    assert _found(run_script(_source(A3C, decorator=decorator, scale=2.0 if decorator else 3.0))) == []


APPLIED_FIT_TF_KERAS = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class GAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.generator = keras.Sequential([keras.layers.Dense(4, input_shape=(3,), name="g")], name="generator")
        self.discriminator = keras.Sequential([keras.layers.Dense(1, input_shape=(4,), name="d")], name="discriminator")

    def compile(self):
        super().compile()
        self.d_opt = keras.optimizers.SGD(1e-3)

    def train_step(self, real):
        z = tf.random.normal((tf.shape(real)[0], 3))
        with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:
            fake = self.generator(z)
            d_loss = tf.reduce_mean(self.discriminator(fake)) - tf.reduce_mean(self.discriminator(real))
            d_grads = d_tape.gradient(d_loss, self.{asked}.trainable_variables)
            self.d_opt.apply_gradients(zip(d_grads, self.discriminator.trainable_variables))
        return {{"d_loss": d_loss}}


gan = GAN()
gan.compile()
gan.fit(np.random.default_rng(0).normal(size=(16, 4)).astype("float32"), batch_size=8, epochs=1, verbose=0)
"""


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("asked", ["generator", "discriminator"])
def test_an_update_of_another_models_gradients_in_a_tf_keras_train_step(tmp_path, asked):
    """biggan's shape under tf_keras: the update inside the tapes of a traced ``train_step``
    fails as under python (Incompatible shapes); the finding at the list (line 21) stands."""
    script = tmp_path / "applied_fit.py"
    script.write_text(APPLIED_FIT_TF_KERAS.format(asked=asked), encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    if asked == "discriminator":
        assert record["error"] is None and found == []
    else:
        assert found == [("GC108", 21, ["g/bias", "g/kernel"])]
