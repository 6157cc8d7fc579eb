"""Every training a script reaches is checked, and a training it never reaches is named
(GC905): "No findings" is never said of a phase that did not run under the check."""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

from gradcheck.trainings import entry_points
from tests.conftest import run_cli


def calls(source: str) -> list[tuple[int, str]]:
    return [(e.line, e.call) for e in entry_points(textwrap.dedent(source))]


def test_entry_points_are_trainings_and_gradient_requests():
    source = """\
        import numpy as np
        import tensorflow as tf
        from sklearn.preprocessing import StandardScaler
        from keras.preprocessing.image import ImageDataGenerator
        scaler = StandardScaler()
        scaler.fit(x)
        datagen = ImageDataGenerator()
        datagen.fit(x)
        slope = np.gradient(x)
        model = build()
        model.fit(x, y,
                  epochs=3)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.minimize(loss, var_list)
        self.model.fit(x)
        jac = tape.batch_jacobian(y, x)
        """
    assert calls(source) == [
        (11, "model.fit"),
        (13, "tape.gradient"),
        (14, "opt.minimize"),
        (15, "self.model.fit"),
        (16, "tape.batch_jacobian"),
    ]
    # a name bound to a Keras model and to another package's estimator may be either
    assert calls("import keras\nfrom sklearn.svm import SVC\nm = keras.Sequential()\nm = SVC()\nm.fit(x)\n") == [
        (5, "m.fit")
    ]


def test_entry_points_of_unreadable_source_are_none():
    assert entry_points("def broken(:\n") == []
    assert entry_points("x = " + "a + " * 20000 + "a\n") == []


def _write(tmp_path, name: str, source: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


TWO_PHASES = """\
    import tensorflow as tf

    w1 = tf.Variable(tf.ones((4, 1)), name="w1")
    w2 = tf.Variable(tf.ones((4, 1)), name="w2")
    opt = tf.keras.optimizers.SGD(0.01)
    x = tf.random.normal((16, 4))


    {decorator}
    def pretrain_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.matmul(x, w1) ** 2)
        grads = tape.gradient(loss, [w1])
        opt.apply_gradients(zip(grads, [w1]))


    {decorator}
    def finetune_step():
        with tf.GradientTape() as tape:
            out = {phase_two}
            loss = tf.reduce_mean(out ** 2)
        grads = tape.gradient(loss, [w2])
        opt.apply_gradients(zip(grads, [w2]))


    for step in range(300):
        pretrain_step()
    for step in range(300):
        finetune_step()
    """


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_a_bug_in_the_second_phase_is_found(tmp_path, decorator):
    """The first phase's step repeats 300 times: it runs on unchecked until the second
    phase's gradient is reached, whose rounding cut is reported at its line."""
    script = _write(
        tmp_path, "phases.py", TWO_PHASES.format(decorator=decorator, phase_two="tf.round(tf.matmul(x, w2))")
    )
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (file,) = json.loads(proc.stdout)["files"]
    assert [(f["code"], f["line"], f["variables"]) for f in file["findings"]] == [("GC102", 20, ["w2"])]
    assert file["status"] == "checked"
    assert file["trainings"]["not_reached"] == []


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_the_correct_two_phase_program_is_clean(tmp_path, decorator):
    script = _write(tmp_path, "phases.py", TWO_PHASES.format(decorator=decorator, phase_two="tf.matmul(x, w2)"))
    proc = run_cli(str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings in 1 checked file" in proc.stderr


def test_a_bug_after_a_fit_is_found_after_a_finding_in_the_fit(tmp_path):
    """A finding in the first training no longer ends the check: the second training's
    bug is found too."""
    script = _write(
        tmp_path,
        "fit_then_loop.py",
        """\
        import numpy as np
        import keras
        import tensorflow as tf

        x = np.random.rand(32, 4).astype("float32")
        y = np.random.rand(32, 1).astype("float32")
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="q")])


        def argmax_loss(y_true, y_pred):
            return tf.reduce_mean((tf.cast(tf.argmax(y_pred, axis=1), tf.float32) - y_true[:, 0]) ** 2)


        model.compile(optimizer="adam", loss=argmax_loss)
        model.fit(x, y, epochs=2, verbose=0)

        w = tf.Variable(tf.ones((4, 1)), name="w")
        for step in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.cast(tf.matmul(x, w) > 0.5, tf.float32))
            grads = tape.gradient(loss, [w])
        """,
    )
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (file,) = json.loads(proc.stdout)["files"]
    assert sorted((f["code"], f["line"]) for f in file["findings"]) == [("GC101", 11), ("GC103", 20)]


def test_a_training_never_reached_is_named(tmp_path):
    """A gradient request the run never reaches (here a function nobody calls) makes the
    file partly checked: GC905, exit 2, status ``partial``; ``--ignore GC905`` accepts it."""
    script = _write(
        tmp_path,
        "unreached.py",
        """\
        import tensorflow as tf

        w = tf.Variable(tf.ones((4, 1)), name="w")
        x = tf.random.normal((16, 4))


        def saliency(image):
            with tf.GradientTape() as tape:
                tape.watch(image)
                out = tf.reduce_sum(tf.matmul(image, w))
            return tape.gradient(out, image)


        for step in range(20):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
        """,
    )
    proc = run_cli(script.name, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "unreached.py: GC905 checked 1 of 2 training entry points; not reached: unreached.py:11 (tape.gradient) "
        "(the script ended without reaching it)" in proc.stdout
    )
    assert "No findings in 1 checked file" not in proc.stderr
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path)
    (file,) = json.loads(proc.stdout)["files"]
    assert file["status"] == "partial"
    assert file["trainings"] == {
        "entry_points": 2,
        "not_reached": [{"line": 11, "column": 12, "call": "tape.gradient"}],
        "ended": "the script ended without reaching it",
    }
    accepted = run_cli(str(script), "--ignore", "GC905", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "No findings in 1 checked file" in accepted.stderr


def test_a_gradient_asked_at_the_end_of_an_epoch_is_named(tmp_path):
    """``fit`` ends after its checked step, so a callback's ``on_epoch_end`` never runs
    under the check: its gradient request is named, not silently passed over."""
    script = _write(
        tmp_path,
        "callback.py",
        """\
        import numpy as np
        import keras
        import tensorflow as tf

        x = np.random.rand(320, 4).astype("float32")
        y = np.random.rand(320, 1).astype("float32")


        class Saliency(keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                image = tf.constant(x[:2])
                with tf.GradientTape() as tape:
                    tape.watch(image)
                    out = tf.reduce_sum(self.model(image))
                print(tape.gradient(out, image).shape)


        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, epochs=2, verbose=0, callbacks=[Saliency()])
        """,
    )
    proc = run_cli(script.name, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not reached: callback.py:15 (tape.gradient)" in proc.stdout


def test_the_timeout_names_what_it_kept_the_run_from(tmp_path):
    script = _write(
        tmp_path,
        "slow.py",
        """\
        import time
        import tensorflow as tf

        w = tf.Variable(tf.ones((4, 1)), name="w")
        x = tf.random.normal((16, 4))
        for step in range(1000):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
            time.sleep(0.1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.matmul(x, w))
        grads = tape.gradient(loss, [w])
        """,
    )
    proc = run_cli(str(script), "--timeout", "20", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (file,) = json.loads(proc.stdout)["files"]
    assert file["status"] == "partial"
    assert file["steps_checked"] >= 1
    assert [e["line"] for e in file["trainings"]["not_reached"]] == [13]
    assert file["trainings"]["ended"] == "the time ran out first: --timeout 20 s"


HAS_TF_KERAS = importlib.util.find_spec("tf_keras") is not None


@pytest.mark.keras2
@pytest.mark.skipif(not HAS_TF_KERAS, reason="tf_keras is not installed")
def test_both_trainings_of_a_tf_keras_script_are_checked(tmp_path):
    """Keras 2: a baseline ``fit``, then a second ``fit`` whose custom ``train_step`` rounds
    the prediction: the second training is reached and its cut found; a finding in the
    first does not hide it."""
    script = _write(
        tmp_path,
        "legacy.py",
        """\
        import numpy as np
        import tensorflow as tf

        x = np.random.rand(320, 4).astype("float32")
        y = np.random.rand(320, 1).astype("float32")
        base = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,), name="base_out")])
        base.compile(optimizer="adam", loss=lambda t, p: tf.reduce_mean(tf.floor(p) - t))
        base.fit(x, y, epochs=3, verbose=0)


        class Rounded(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.head = tf.keras.layers.Dense(1, name="head")

            def call(self, inputs):
                return self.head(inputs)

            def train_step(self, data):
                inputs, target = data
                with tf.GradientTape() as tape:
                    pred = tf.round(self(inputs, training=True))
                    loss = tf.reduce_mean((pred - target) ** 2)
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}


        model = Rounded()
        model.compile(optimizer="adam")
        model.fit(x, y, epochs=3, verbose=0)
        """,
    )
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path, env={"TF_USE_LEGACY_KERAS": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (file,) = json.loads(proc.stdout)["files"]
    assert sorted((f["code"], f["line"]) for f in file["findings"]) == [("GC102", 7), ("GC102", 22)]


GAN_EAGER_STEP = """\
import keras
import numpy as np
import tensorflow as tf


class GAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.gen = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="g")], name="gen")
        self.critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, name="c")], name="critic")

    def compile(self, d_opt, g_opt):
        super().compile()
        self.d_opt, self.g_opt = d_opt, g_opt

    def train_step(self, real):
        for _ in range(3):  # the critic's steps: one tape.gradient line, asked three times
            with tf.GradientTape() as tape:
                d_loss = tf.reduce_mean(self.critic(self.gen(tf.random.normal([8, 4])))) - tf.reduce_mean(
                    self.critic(real)
                )
            grads = tape.gradient(d_loss, self.critic.trainable_variables)
            self.d_opt.apply_gradients(zip(grads, self.critic.trainable_variables))
        with tf.GradientTape() as tape:
            g_loss = -tf.reduce_mean(self.critic(GENERATED))
        grads = tape.gradient(g_loss, self.gen.trainable_variables)
        self.g_opt.apply_gradients(zip(grads, self.gen.trainable_variables))
        return {"d": d_loss, "g": g_loss}


model = GAN()
model.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3))
model.run_eagerly = True
model.fit(np.random.rand(32, 3).astype("float32"), batch_size=8, epochs=2, verbose=0)
"""


@pytest.mark.parametrize(
    ("generated", "codes"),
    [
        ("self.gen(tf.random.normal([8, 4]))", []),  # correct: both trainings checked, silent
        ("tf.round(self.gen(tf.random.normal([8, 4])))", ["GC102"]),  # the generator's bug, after the critic's steps
    ],
)
def test_a_later_gradient_inside_an_eager_fit_step_is_reached(tmp_path, generated, codes):
    """A train_step run eagerly asks the critic's gradient three times before the generator's:
    the repeated critic call runs on, unchecked, until the generator's line is reached and
    checked (it ended the fit, and the file was 'partly checked', GC905)."""
    script = tmp_path / "gan_eager.py"
    script.write_text(GAN_EAGER_STEP.replace("GENERATED", generated))
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path)
    [result] = json.loads(proc.stdout)["files"]
    assert result["status"] == "checked", result
    assert [f["code"] for f in result["findings"]] == codes
    assert proc.returncode == (1 if codes else 0), proc.stderr
