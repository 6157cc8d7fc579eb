"""The command line end to end: real child processes, real TensorFlow."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT, run_cli

SCHEMA = json.loads((ROOT / "gradcheck" / "schema" / "report-v1.json").read_text())
BROKEN = ROOT / "examples" / "dqn_broken.py"

ONE_HOT_FIXED = BROKEN.read_text().replace(
    """            metric = tf.math.argmin(y_pred, axis=1)
            loss = keras.losses.mean_squared_error(y, metric)""",
    """            taken = tf.cast(y, tf.int32)
            q_taken = tf.reduce_sum(y_pred * tf.one_hot(taken, NUM_ACTIONS), axis=1)
            loss = keras.losses.mean_squared_error(y, q_taken)""",
)

TWO_HEADS = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    inputs = keras.Input((6,))
    trunk = keras.layers.Dense(16, activation="relu", name="trunk")(inputs)
    policy = keras.layers.Dense(3, name="policy_head")(trunk)
    value = keras.layers.Dense(1, name="value_head")(trunk)
    model = keras.Model(inputs, [policy, value])
    optimizer = keras.optimizers.Adam(1e-3)
    x = np.random.rand(32, 6).astype("float32")
    returns = np.random.rand(32, 1).astype("float32")
    best = np.random.randint(0, 3, 32)
    with tf.GradientTape() as tape:
        logits, values = model(x)
        chosen = tf.argmax(logits, axis=1)
        policy_loss = tf.reduce_mean(tf.cast(tf.abs(chosen - best), tf.float32))
        value_loss = tf.reduce_mean(tf.square(returns - values))
        loss = policy_loss + value_loss
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)

NEVER_CALLED = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf


    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.body = keras.layers.Dense(8, name="body")
            self.unused = keras.layers.Dense(8, name="unused")
            self.head = keras.layers.Dense(1, name="head")

        def build(self, input_shape):
            self.body.build(input_shape)
            self.unused.build((None, 8))
            self.head.build((None, 8))

        def call(self, x):
            return self.head(self.body(x))


    model = Net()
    x = np.random.rand(16, 4).astype("float32")
    y = np.random.rand(16, 1).astype("float32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    """
)


@pytest.fixture(scope="module")
def json_run(tmp_path_factory):
    """One CLI run over several scripts (each still in its own child process)."""
    tmp = tmp_path_factory.mktemp("cli")
    files = {
        "broken": BROKEN,
        "fixed": tmp / "dqn_onehot.py",
        "two_heads": tmp / "two_heads.py",
        "never_called": tmp / "never_called.py",
    }
    files["fixed"].write_text(ONE_HOT_FIXED)
    files["two_heads"].write_text(TWO_HEADS)
    files["never_called"].write_text(NEVER_CALLED)
    proc = run_cli("--format", "json", "-j", "2", *map(str, files.values()))
    report = json.loads(proc.stdout)
    by_path = {Path(f["path"]).name: f for f in report["files"]}
    return proc, report, {k: by_path[v.name] for k, v in files.items()}


def test_broken_example_is_diagnosed_at_the_argmin(json_run):
    proc, _, files = json_run
    assert proc.returncode == 1, proc.stderr
    broken = files["broken"]
    assert broken["status"] == "checked" and broken["steps_checked"] == 1
    (finding,) = broken["findings"]
    source_line = BROKEN.read_text().splitlines()[finding["line"] - 1]
    assert "tf.math.argmin(y_pred, axis=1)" in source_line
    assert finding["column"] == source_line.index("tf.math.argmin") + 1
    assert (finding["code"], finding["name"], finding["op"], finding["call"]) == (
        "GC101",
        "integer-index-op",
        "ArgMin",
        "tf.math.argmin",
    )
    assert finding["variables"] == [
        "q_network/hidden/bias",
        "q_network/hidden/kernel",
        "q_network/q_values/bias",
        "q_network/q_values/kernel",
    ]
    assert "tf.one_hot" in finding["fix"] and "batch_dims=1" in finding["fix"]
    cut = [link for link in finding["chain"] if link.get("cut")]
    assert [link["op"] for link in cut] == ["ArgMin"]


def test_one_hot_selection_is_clean(json_run):
    _, _, files = json_run
    assert files["fixed"]["status"] == "checked"
    assert files["fixed"]["steps_checked"] == 1
    assert files["fixed"]["findings"] == []


def test_only_the_argmax_head_is_reported(json_run):
    _, _, files = json_run
    (finding,) = files["two_heads"]["findings"]
    assert finding["code"] == "GC101"
    assert finding["variables"] == ["policy_head/bias", "policy_head/kernel"]
    assert TWO_HEADS.splitlines()[finding["line"] - 1].strip().startswith("chosen = tf.argmax")


def test_layer_never_called_is_gc108(json_run):
    _, _, files = json_run
    (finding,) = files["never_called"]["findings"]
    assert finding["code"] == "GC108"
    assert finding["variables"] == ["net/unused/bias", "net/unused/kernel"]
    assert "tape.gradient" in NEVER_CALLED.splitlines()[finding["line"] - 1]


def test_json_validates_against_the_shipped_schema(json_run):
    _, report, _ = json_run
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(report, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert report["summary"] == {"files": 4, "findings": 3, "errors": 0}


def test_the_schema_rejects_a_broken_report(json_run):
    _, report, _ = json_run
    bad = json.loads(json.dumps(report))
    bad["files"][0]["findings"][0]["line"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA, cls=jsonschema.Draft202012Validator)


def test_full_text_output():
    proc = run_cli(str(BROKEN.relative_to(ROOT)))
    assert proc.returncode == 1
    out = proc.stdout
    assert out.startswith("examples/dqn_broken.py:34:22: GC101 tf.math.argmin returns integer indices")
    assert "34 |             metric = tf.math.argmin(y_pred, axis=1)" in out
    assert "^" * len("tf.math.argmin(y_pred, axis=1)") + " GC101" in out
    assert "= path: q_network/hidden/kernel → MatMul" in out and "✂ ArgMin" in out
    assert "= fix: " in out
    assert "\x1b[" not in out  # not a terminal: no colour
    assert proc.stderr.strip().endswith("1 finding in 1 file")


def test_tensorflow_missing_is_gc904(tmp_path):
    blocker = tmp_path / "blocker"
    (blocker / "tensorflow").mkdir(parents=True)
    (blocker / "tensorflow" / "__init__.py").write_text("raise ImportError('No module named tensorflow')\n")
    proc = run_cli("examples/dqn_broken.py", env={"PYTHONPATH": str(blocker)})
    assert proc.returncode == 2
    assert "examples/dqn_broken.py: GC904 TensorFlow cannot be imported" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_help_and_version_do_not_import_tensorflow():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from gradcheck.cli import main\n"
        "r1 = CliRunner().invoke(main, ['--help'])\n"
        "r2 = CliRunner().invoke(main, ['--version'])\n"
        "r3 = CliRunner().invoke(main, ['--explain', 'GC101'])\n"
        "assert r1.exit_code == r2.exit_code == r3.exit_code == 0\n"
        "assert 'gradcheck' in r2.output and 'TensorFlow' in r2.output and 'Keras' in r2.output\n"
        "assert '## Why is this bad?' in r3.output\n"
        "print('tensorflow' in sys.modules)\n"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_list_rules_names_every_code():
    from click.testing import CliRunner

    from gradcheck.cli import main
    from gradcheck.rules import RULES

    result = CliRunner().invoke(main, ["--list-rules"])
    assert result.exit_code == 0
    for code, rule in RULES.items():
        assert f"{code}  {rule.name}" in result.output


def test_unknown_select_code_is_a_usage_error():
    from click.testing import CliRunner

    from gradcheck.cli import main

    result = CliRunner().invoke(main, ["--select", "GC999", "examples/dqn_broken.py"])
    assert result.exit_code == 2
    assert "GC999" in result.output


def test_parallel_output_equals_serial_output():
    files = [
        "tests/realworld/cases/005_round_count_accuracy_loss.py",
        "examples/dqn_broken.py",
        "tests/fixtures/bad_input/empty.py",
        "tests/realworld/clean/101_dqn_onehot_q_selection.py",
    ]
    serial = run_cli("-j", "1", *files)
    parallel = run_cli("-j", "2", *files)
    assert serial.returncode == parallel.returncode == 2
    assert serial.stdout == parallel.stdout
    assert serial.stderr.strip().splitlines()[-1] == parallel.stderr.strip().splitlines()[-1]
    assert serial.stderr.strip().endswith("2 findings in 2 files; 1 file could not be checked")
    # deterministic order: as given on the command line
    headers = [line.split(":", 1)[0] for line in serial.stdout.splitlines() if ": GC" in line]
    assert headers == [files[0], files[1], files[2]]


# --graph FILE.png (issue 27, item 6): rendered by Graphviz, or refused at once.


def test_graph_png_without_graphviz_is_refused_before_checking(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\n")
    proc = run_cli(str(script), "--graph", str(tmp_path / "cut.png"), env={"PATH": str(tmp_path)})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "gradcheck: --graph FILE.png needs Graphviz's `dot` on PATH; install Graphviz or ask for FILE.dot instead "
        "(nothing was checked)"
    )
    assert not (tmp_path / "cut.png").exists()


def test_graph_with_a_suffix_nothing_renders_is_refused(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\n")
    proc = run_cli(str(script), "--graph", str(tmp_path / "cut.pdf"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--graph cut.pdf: write FILE.dot, FILE.svg or FILE.png" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_graph_png_is_rendered_by_dot(tmp_path):
    import shutil

    from gradcheck.findings import Finding
    from gradcheck.output.dot import write_graph

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    graph = {"nodes": [{"id": 0, "label": "v", "kind": "variable"}, {"id": 1, "label": "loss", "kind": "loss"}]}
    finding = Finding("GC101", "argmax", "train.py", 3, graph={**graph, "edges": [[0, 1]]})
    written = write_graph([finding], tmp_path / "cut.png")
    assert written.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_graph_png_is_drawn_with_dot_png(tmp_path, monkeypatch):
    """Without Graphviz here, a fake ``dot`` shows the call: ``dot -Tpng``, bytes in and out."""
    import subprocess

    from gradcheck.output import dot

    calls = []

    def fake_run(args, input, capture_output, check):
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, b"\x89PNG fake", b"")

    monkeypatch.setattr(dot.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(dot.subprocess, "run", fake_run)
    written = dot.write_graph([], tmp_path / "cut.PNG")
    assert calls == [["/usr/bin/dot", "-Tpng"]]
    assert written.read_bytes() == b"\x89PNG fake"
