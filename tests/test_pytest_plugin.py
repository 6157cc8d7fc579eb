"""The pytest plugin, through real pytest runs in subprocesses (TensorFlow state never
leaks between runs)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]

MODELS = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    NUM_ACTIONS = 3


    class QNet(keras.Model):
        def __init__(self, one_hot):
            super().__init__()
            self.one_hot = one_hot
            self.body = keras.layers.Dense(8, activation="relu", name="body")
            self.head = keras.layers.Dense(NUM_ACTIONS, name="head")

        def call(self, x):
            return self.head(self.body(x))

        def train_step(self, data):
            (x, actions), y = data
            with tf.GradientTape() as tape:
                q = self(x, training=True)
                if self.one_hot:
                    chosen = tf.reduce_sum(q * tf.one_hot(actions, NUM_ACTIONS), axis=1)
                else:
                    chosen = tf.math.argmin(q, axis=1)
                loss = keras.losses.mean_squared_error(y, chosen)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}


    def batch():
        x = np.random.rand(8, 4).astype("float32")
        return (x, np.random.randint(0, NUM_ACTIONS, 8)), np.random.rand(8).astype("float32")


    def make(one_hot):
        model = QNet(one_hot)
        model.compile(optimizer="adam")
        return model
    """
)


@pytest.fixture
def project(pytester):
    pytester.makepyfile(models=MODELS)
    return pytester


def test_fixture_fails_on_the_broken_dqn_with_the_diagnosis(project):
    project.makepyfile(
        test_dqn="""
        from models import batch, make

        def test_broken(gradcheck):
            gradcheck.assert_flows(make(one_hot=False), batch())

        def test_fixed(gradcheck):
            report = gradcheck.assert_flows(make(one_hot=True), batch())
            assert report.ok
        """
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "GC101 tf.math.argmin returns integer indices" in out
    assert "chosen = tf.math.argmin(q, axis=1)" in out
    assert "tf.one_hot(actions, num_actions)" in out
    # The failure text is the CLI's, not an assertion-rewriting rendition of it.
    assert "= path: q_net/body/kernel" in out and "= fix:" in out


def test_marker_allows_a_frozen_half_but_not_an_unexpected_none(project):
    project.makepyfile(
        test_gan="""
        import keras
        import numpy as np
        import pytest
        import tensorflow as tf

        generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
        critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="critic")

        def generator_step(noise):
            with tf.GradientTape() as tape:
                loss = -tf.reduce_mean(critic(generator(noise)))
            # one call for both models: the critic is meant to stay frozen in this step
            return tape.gradient(loss, generator.trainable_variables + critic.trainable_variables)

        def frozen_critic_step(noise):
            with tf.GradientTape() as tape:
                fake = tf.stop_gradient(generator(noise))
                loss = -tf.reduce_mean(critic(fake))
            return tape.gradient(loss, generator.trainable_variables + critic.trainable_variables)

        noise = np.random.rand(8, 2).astype("float32")

        @pytest.mark.gradcheck(allow_none=["generator/*"])
        def test_generator_frozen_on_purpose(gradcheck):
            gradcheck.assert_flows(frozen_critic_step, (noise,))

        @pytest.mark.gradcheck(allow_none=["generator/*"])
        def test_unexpected_none_still_fails(gradcheck):
            def step(noise):
                with tf.GradientTape() as tape:
                    loss = -tf.reduce_mean(tf.round(critic(generator(noise))))
                return tape.gradient(loss, generator.trainable_variables + critic.trainable_variables)
            gradcheck.assert_flows(step, (noise,))
        """
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "GC102" in out and "critic/d/kernel" in out
    assert "generator/g/kernel" not in out.split("GC102", 1)[1].split("= fix", 1)[0]


def test_gradcheck_option_collects_scripts_and_caches_passes(pytester):
    scripts = pytester.mkdir("scripts")
    broken = (ROOT / "examples" / "dqn_broken.py").read_text()
    (scripts / "train_broken.py").write_text(broken)
    fixed = broken.replace(
        "            metric = tf.math.argmin(y_pred, axis=1)\n",
        "            metric = tf.reduce_sum(y_pred * tf.one_hot(tf.cast(y, tf.int32), NUM_ACTIONS), axis=1)\n",
    )
    (scripts / "train_fixed.py").write_text(fixed)
    (scripts / "helpers.py").write_text("def unrelated():\n    return 1\n")

    first = pytester.runpytest_subprocess("--gradcheck", "scripts")
    first.assert_outcomes(passed=1, failed=1)
    out = first.stdout.str()
    assert "[gradcheck] scripts/train_broken.py" in out
    assert "scripts/train_broken.py:34:22: GC101" in out
    assert "Traceback" not in out

    second = pytester.runpytest_subprocess("--gradcheck", "scripts", "-rs")
    second.assert_outcomes(skipped=1, failed=1)
    assert "unchanged since it last passed" in second.stdout.str()

    # without pytest's cache plugin there is nothing to reuse, and nothing breaks
    uncached = pytester.runpytest_subprocess("--gradcheck", "scripts", "-p", "no:cacheprovider")
    uncached.assert_outcomes(passed=1, failed=1)


def test_a_suite_that_never_uses_the_plugin_imports_no_tensorflow(pytester):
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_no_tensorflow():
            assert "gradcheck.pytest_plugin" in sys.modules  # the plugin is loaded...
            assert "tensorflow" not in sys.modules          # ...and costs nothing
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_hypothesis_finds_a_branch_dependent_cut(pytester):
    pytester.makepyfile(
        test_branch="""
        import keras
        import numpy as np
        import tensorflow as tf
        from hypothesis import HealthCheck, given, settings

        from gradcheck import assert_gradients_flow
        from gradcheck.strategies import batches

        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])

        def step(x, y):
            with tf.GradientTape() as tape:
                prediction = model(x)
                if float(tf.reduce_max(x)) > 0.9:  # a rare branch that rounds the output
                    prediction = tf.round(prediction)
                loss = tf.reduce_mean(tf.square(prediction - y))
            return tape.gradient(loss, model.trainable_variables)

        def test_fixed_batch_misses_it():
            x = np.full((4, 3), 0.1, "float32")
            assert_gradients_flow(step, (x, np.zeros((4, 2), "float32")))

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(batch=batches(model))
        def test_sweep_finds_it(batch):
            x, y = batch
            assert_gradients_flow(step, (x, y))
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "test_sweep_finds_it" in out and "GC102" in out
    assert "Falsifying example" in out or "Failing test case" in out
