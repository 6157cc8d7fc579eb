"""The pre-filter that picks the files the trace engine runs (and the trace hook with
``--training-only``): training scripts yes, libraries, inference and other frameworks no."""

from __future__ import annotations

import textwrap

import pytest

from gradcheck import check, discover
from gradcheck.config import Config
from gradcheck.findings import CHECKED, SKIPPED, FileResult
from gradcheck.static import is_training_code

TRAINING = {
    "tape at top level": """
        import tensorflow as tf
        w = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            loss = w * w
        tape.gradient(loss, [w])
    """,
    "fit on a Sequential in the main block": """
        import keras
        def build():
            return keras.Sequential([keras.layers.Dense(1)])
        if __name__ == "__main__":
            model = build()
            model.compile(optimizer="adam", loss="mse")
            model.fit([[0.0]], [[0.0]])
    """,
    "main() calls a custom loop": """
        import tensorflow as tf
        def train(model, data):
            for x, y in data:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                tape.gradient(loss, model.trainable_variables)
        def main():
            train(make_model(), load())
        if __name__ == "__main__":
            main()
    """,
    "a train_step reached through tf.function": """
        import keras
        import tensorflow as tf
        class Agent(keras.Model):
            def train_step(self, data):
                with tf.GradientTape() as tape:
                    loss = self(data)
                return tape.gradient(loss, self.trainable_variables)
        agent = Agent()
        step = tf.function(agent.train_step)
        step(batch)
    """,
    "a method of a trainer object": """
        from tensorflow import keras
        class Trainer:
            def run(self):
                self.model.fit(self.x, self.y)
        Trainer().run()
    """,
    "aliased tape": """
        from tensorflow import GradientTape as GT
        with GT() as t:
            y = f(x)
        t.gradient(y, x)
    """,
    "unparsable but plainly training": """
        import tensorflow as tf
        with tf.GradientTape() as tape
            loss = model(x)
    """,
}

NOT_TRAINING = {
    "no TensorFlow or Keras": """
        from sklearn.linear_model import LinearRegression
        model = LinearRegression()
        model.fit(X, y)
    """,
    "scikit-learn beside TensorFlow": """
        import tensorflow as tf
        from sklearn.linear_model import LinearRegression
        model = LinearRegression()
        model.fit(X, y)
    """,
    "a library that only defines a train_step": """
        import keras
        import tensorflow as tf
        class Net(keras.Model):
            def train_step(self, data):
                with tf.GradientTape() as tape:
                    loss = self(data)
                return tape.gradient(loss, self.trainable_variables)
    """,
    "inference only": """
        import keras
        model = keras.models.load_model("model.keras")
        print(model.predict(inputs))
    """,
    "words in a docstring": '''
        """Explains GradientTape, gradients and train_step."""
        import tensorflow as tf
        print(tf.__version__)
    ''',
    "plain Python": "print('hello')\n",
}


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in TRAINING.items()])
def test_training_code(source):
    assert is_training_code(textwrap.dedent(source))


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in NOT_TRAINING.items()])
def test_not_training_code(source):
    assert not is_training_code(textwrap.dedent(source))


def test_discover_uses_the_prefilter_unless_scripts_are_configured(tmp_path):
    library = tmp_path / "library.py"
    library.write_text(textwrap.dedent(NOT_TRAINING["a library that only defines a train_step"]))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAINING["tape at top level"]))
    assert discover.is_training_script(str(script), Config())
    assert not discover.is_training_script(str(library), Config())
    assert discover.is_training_script(str(library), Config(scripts=["library.py"]))
    assert not discover.is_training_script(str(tmp_path / "missing.py"), Config())


@pytest.fixture
def traced(monkeypatch):
    """check_targets with the child process replaced: records which files would be traced."""
    calls: list[str] = []

    def fake_run_child(target, options, *args, **kwargs):
        calls.append(target)
        return FileResult(discover.split_target(target)[0], CHECKED, steps_checked=1)

    monkeypatch.setattr(check, "run_child", fake_run_child)
    return calls


def test_training_only_skips_named_files_that_do_not_train(tmp_path, traced):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAINING["tape at top level"]))
    helper = tmp_path / "helper.py"
    helper.write_text("import tensorflow as tf\n\ndef scale(x):\n    return 2 * x\n")
    files = [str(script), str(helper), f"{helper}::scale"]

    report = check.check_targets(files, Config(), check.Options(training_only=True))
    assert traced == [str(script), f"{helper}::scale"]  # an explicit ::function is always run
    assert [r.status for r in report.files] == [CHECKED, SKIPPED, CHECKED]
    assert report.exit_code() == 0

    traced.clear()
    check.check_targets(files[:2], Config(), check.Options())
    assert traced == files[:2]  # without the flag, files named directly are all traced


def test_training_only_does_not_change_the_static_engine(tmp_path, traced):
    helper = tmp_path / "helper.py"
    helper.write_text("import tensorflow as tf\nx = tf.round(1.0)\n")
    report = check.check_targets([str(helper)], Config(), check.Options(static=True, training_only=True))
    assert traced == [] and report.files[0].status == CHECKED
