"""Every way a training step runs: Keras fit (graph, run_eagerly, jit_compile), custom loops
eager and under tf.function, nested and persistent tapes, several gradient calls per step,
nested source structures, UnconnectedGradients.ZERO, and the step budget."""

from __future__ import annotations

import textwrap

import pytest

ARGMAX_TRAIN_STEP = """\
import keras
import numpy as np
import tensorflow as tf


class QNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(8, activation="relu", name="body")
        self.head = keras.layers.Dense(3, name="head")

    def call(self, x):
        return self.head(self.body(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            q = self(x, training=True)
            action = tf.math.argmax(q, axis=1)
            loss = keras.losses.mean_squared_error(y, action)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}


model = QNet()
model.compile(optimizer="adam", {compile_args})
model.fit(np.random.rand(64, 4).astype("float32"), np.random.rand(64).astype("float32"), epochs=3, verbose=0)
"""


@pytest.mark.parametrize("compile_args", ["", "run_eagerly=True", "jit_compile=True"])
def test_fit_modes(run_script, compile_args):
    result = run_script(ARGMAX_TRAIN_STEP.format(compile_args=compile_args))
    assert result.error is None
    (finding,) = result.findings
    assert (finding.code, finding.line, finding.op) == ("GC101", 19, "ArgMax")
    assert finding.variables == ["q_net/body/bias", "q_net/body/kernel", "q_net/head/bias", "q_net/head/kernel"]
    assert result.steps_checked == 1


def test_gan_two_gradient_calls_per_step_are_both_checked(run_script):
    source = textwrap.dedent(
        """\
        import keras
        import numpy as np
        import tensorflow as tf

        generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, name="g")], name="generator")
        critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="critic")
        g_opt, d_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)
        real = np.random.rand(16, 4).astype("float32")


        @tf.function
        def train_step(noise):
            with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
                fake = generator(noise)
                d_loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))
                g_loss = -tf.reduce_mean(tf.round(critic(fake)))
            d_grads = d_tape.gradient(d_loss, critic.trainable_variables)
            g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
            d_opt.apply_gradients(zip(d_grads, critic.trainable_variables))
            g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))


        for step in range(5):
            train_step(np.random.rand(16, 2).astype("float32"))
        """
    )
    result = run_script(source)
    (finding,) = result.findings
    assert finding.code == "GC102" and finding.line == 16
    assert finding.variables == ["generator/g/bias", "generator/g/kernel"]


def test_persistent_and_nested_tapes(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(np.ones((3, 2), "float32"), name="w")
        v = tf.Variable(np.ones((2,), "float32"), name="v")
        x = np.random.rand(4, 3).astype("float32")
        with tf.GradientTape(persistent=True) as outer:
            with tf.GradientTape() as inner:
                h = x @ w
                y = tf.reduce_sum(h * v)
            dy_dw = inner.gradient(y, w)
            penalty = tf.reduce_sum(tf.floor(dy_dw))
            total = y + penalty
        first = outer.gradient(total, [w, v])
        second = outer.gradient(penalty, {"v": v})
        """
    )
    result = run_script(source)
    (finding,) = result.findings
    # dy/dw depends on v only; flooring it cuts v out of the penalty (w is still fine via y).
    assert finding.code == "GC102" and finding.line == 12 and finding.variables == ["v"]


def test_dict_and_nested_sources_and_targets(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        c = tf.Variable(3.0, name="c")
        with tf.GradientTape() as tape:
            first = a * 2.0
            second = tf.cast(tf.cast(b, tf.int32), tf.float32)
        grads = tape.gradient({"x": first, "y": [second]}, {"params": [a, (b, c)]})
        """
    )
    result = run_script(source)
    codes = sorted((f.code, f.line, tuple(f.variables)) for f in result.findings)
    assert codes == [("GC103", 9, ("b",)), ("GC108", 10, ("c",))]


def test_unconnected_zero_does_not_hide_a_cut(run_script):
    source = textwrap.dedent(
        """\
        import keras
        import numpy as np
        import tensorflow as tf

        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        x = np.random.rand(8, 4).astype("float32")
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.cast(tf.argmax(model(x), axis=1), tf.float32))
        grads = tape.gradient(loss, model.trainable_variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        assert all(g is not None and float(tf.reduce_sum(tf.abs(g))) == 0.0 for g in grads), grads
        assert [tuple(g.shape) for g in grads] == [(4, 3), (3,)]
        """
    )
    result = run_script(source)
    assert result.error is None  # the script's own asserts passed: the user still got zeros
    (finding,) = result.findings
    assert finding.code == "GC101" and finding.line == 8


def test_step_function_called_from_a_loop_stops_after_the_budget(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(np.ones((3, 1), "float32"), name="w")
        calls = []


        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.round(x @ w))
            calls.append(1)
            return tape.gradient(loss, [w])


        for i in range(100):
            step(np.random.rand(2, 3).astype("float32"))
        raise SystemExit(f"the loop ran to its end: {len(calls)}")
        """
    )
    result = run_script(source, steps=3)
    assert result.error is None
    assert result.steps_checked == 3
    assert [f.code for f in result.findings] == ["GC102"]


def test_an_inner_gradient_repeated_under_an_outer_tape_runs_on_to_the_outer_gradient(run_script):
    # MAML: the inner call site repeats (tasks x inner steps) before the outer gradient is
    # asked; the budget must not end the program there, or the outer cut is never seen.
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(np.ones((3, 1), "float32"), name="w")
        x = np.random.rand(4, 3).astype("float32")
        with tf.GradientTape() as outer:
            fast, total = w, 0.0
            for _ in range(3):
                with tf.GradientTape() as inner:
                    inner.watch(fast)
                    loss = tf.reduce_sum(tf.square(x @ fast))
                g = inner.gradient(loss, fast)
                fast = tf.round(fast - 0.1 * g)
            total += tf.reduce_sum(x @ fast)
        outer.gradient(total, [w])
        """
    )
    result = run_script(source)
    assert result.error is None
    assert [(f.code, f.line, f.variables) for f in result.findings] == [("GC102", 13, ["w"])]


def test_a_whole_loop_under_one_outer_tape_still_ends_after_the_budget(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(np.ones((3, 1), "float32"), name="w")
        with tf.GradientTape(persistent=True) as outer:
            for i in range(10000):
                with tf.GradientTape() as inner:
                    loss = tf.reduce_sum(tf.square(np.random.rand(2, 3).astype("float32") @ w))
                inner.gradient(loss, [w])
        raise SystemExit(f"the loop ran to its end: {i}")
        """
    )
    result = run_script(source)
    assert result.error is None
    assert result.steps_checked == 65  # the budget (1) and the inner repeats allowed under a recording tape


def test_the_checked_step_applies_no_update(run_script):
    source = textwrap.dedent(
        """\
        import builtins

        import keras
        import numpy as np

        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        builtins._gradcheck_test = (model, [w.copy() for w in model.get_weights()])
        model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
        model.fit(np.random.rand(32, 4).astype("float32"), np.random.rand(32, 1).astype("float32"), batch_size=8, verbose=0)
        """
    )
    import builtins

    import numpy as np

    result = run_script(source)
    model, before = builtins.__dict__.pop("_gradcheck_test")
    assert result.findings == [] and result.steps_checked == 1
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)  # SGD(1.0) would have moved them


def test_file_build_function_forms(tmp_path):
    from tests.conftest import run_cli

    (tmp_path / "library.py").write_text(
        textwrap.dedent(
            """\
            import keras
            import numpy as np
            import tensorflow as tf


            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(2, name="dense")

                def call(self, x):
                    return self.dense(x)

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(tf.round(self(x)) - y))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            def build():
                model = Net()
                model.compile(optimizer="sgd")
                return model, (np.ones((4, 3), "float32"), np.ones((4, 2), "float32"))


            def build_step():
                w = tf.Variable(1.0, name="w")

                def step():
                    with tf.GradientTape() as tape:
                        loss = tf.floor(w * 3.0)
                    return tape.gradient(loss, w)

                return step
            """
        )
    )
    proc = run_cli("--format", "json", f"{tmp_path}/library.py::build", f"{tmp_path}/library.py::build_step", "-j", "2")
    import json

    files = json.loads(proc.stdout)["files"]
    assert [[f["code"] for f in r["findings"]] for r in files] == [["GC102"], ["GC102"]]
    assert proc.returncode == 1

    proc = run_cli(str(tmp_path / "library.py"))
    assert proc.returncode == 2
    assert "GC902" in proc.stdout and "library.py::build" in proc.stdout


def test_no_gradient_reached_is_gc902(run_script):
    result = run_script("import tensorflow as tf\nprint(tf.constant(1.0) + 1)\n")
    assert result.error is not None and result.error.code == "GC902"


def test_a_crash_before_the_step_is_gc901(run_script):
    result = run_script("import tensorflow as tf\nraise ValueError('bad data')\n")
    assert result.error.code == "GC901"
    assert "ValueError: bad data" in result.error.message
