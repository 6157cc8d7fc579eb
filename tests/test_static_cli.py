"""``gradcheck --static`` end to end, in real processes: it never runs the code under review,
never imports TensorFlow, recurses into directories and renders through the same outputs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, run_cli

BROKEN = ROOT / "tests" / "fixtures" / "static" / "broken"
CLEAN = ROOT / "tests" / "fixtures" / "static" / "clean"

#: A file whose top level would leave a mark and end the process, before a GC101 bug.
CANARY = """\
import os
import sys

with open({marker!r}, "w") as fh:
    fh.write("the static engine ran this file")
sys.exit(3)

import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.cast(tf.argmax(model(x), axis=1), tf.float32))
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_static_engine_never_executes_the_file(tmp_path):
    marker = tmp_path / "ran.txt"
    script = tmp_path / "canary.py"
    script.write_text(CANARY.format(marker=str(marker)))
    result = run_cli("--static", "--format", "concise", str(script), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"{script}:13:" in result.stdout and "GC101" in result.stdout
    assert not marker.exists()


def test_training_only_skips_without_running(tmp_path):
    marker = tmp_path / "ran.txt"
    script = tmp_path / "not_training.py"
    script.write_text(f"with open({str(marker)!r}, 'w') as fh:\n    fh.write('ran')\n")
    result = run_cli("--training-only", str(script), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists()


def test_static_run_imports_no_tensorflow():
    """The CLI in this very process, then a look at what it imported."""
    code = textwrap.dedent(
        f"""
        import sys
        from gradcheck.cli import main
        try:
            main(["--static", "--quiet", {str(ROOT / "examples")!r}, {str(BROKEN)!r}])
        except SystemExit as exit_:
            code = exit_.code
        heavy = sorted(m for m in ("tensorflow", "keras", "jax", "torch") if m in sys.modules)
        print(code, heavy)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.stdout.strip().splitlines()[-1] == "1 []", result.stdout[-2000:] + result.stderr


def test_directories_recurse():
    broken = run_cli("--static", "--format", "concise", str(BROKEN))
    assert broken.returncode == 1
    assert {line.split(":")[0] for line in broken.stdout.splitlines()} == {str(p) for p in BROKEN.glob("*.py")}
    clean = run_cli("--static", str(CLEAN))
    assert clean.returncode == 0, clean.stdout
    assert f"No findings in {len(list(CLEAN.glob('*.py')))} checked files" in clean.stderr


def test_json_report_follows_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    result = run_cli("--static", "--format", "json", str(ROOT / "examples" / "dqn_broken.py"))
    assert result.returncode == 1
    report = json.loads(result.stdout)
    schema = json.loads((ROOT / "gradcheck" / "schema" / "report-v1.json").read_text())
    jsonschema.validate(report, schema)
    (record,) = report["files"]
    (finding,) = record["findings"]
    assert (record["status"], finding["code"], finding["line"], finding["call"]) == (
        "checked",
        "GC101",
        34,
        "tf.math.argmin",
    )


def test_noqa_and_select_apply_to_static_findings(tmp_path):
    source = (BROKEN / "data_flow.py").read_text()
    script = tmp_path / "suppressed.py"
    script.write_text(source.replace("# expect: GC101", "# noqa: GC101"))
    result = run_cli("--static", "--format", "concise", str(script))
    codes = {line.split()[1] for line in result.stdout.splitlines()}
    assert codes == {"GC102", "GC103", "GC104", "GC105"}
    only = run_cli("--static", "--format", "concise", "--select", "GC104", str(script))
    assert {line.split()[1] for line in only.stdout.splitlines()} == {"GC104"}


def test_a_file_that_does_not_parse_is_reported(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("with tf.GradientTape() as tape\n    pass\n")
    result = run_cli("--static", str(script))
    assert result.returncode == 2
    assert "GC901" in result.stdout and "SyntaxError" in result.stdout


def test_an_empty_file_is_clean_to_the_static_engine(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    result = run_cli("--static", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings in 1 checked file" in result.stderr


def test_a_notebook_is_read_cell_by_cell(tmp_path):
    """Code cells joined in order (IPython lines neutralised): findings, notes and syntax
    errors point at ``nb.ipynb:cell N`` and the line within the cell, as the trace engine's do."""
    nbformat = pytest.importorskip("nbformat")
    cells = [
        nbformat.v4.new_markdown_cell("# DQN"),
        nbformat.v4.new_code_cell("%pip install tensorflow\nimport keras\nimport tensorflow as tf\n%matplotlib inline"),
        nbformat.v4.new_code_cell(
            "q_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])\nstates = tf.random.normal((8, 4))"
        ),
        nbformat.v4.new_code_cell(
            "with tf.GradientTape() as tape:\n"
            "    action = tf.argmax(q_net(states), axis=1)\n"
            "    loss = tf.reduce_mean(tf.cast(action, tf.float32))\n"
            "grads = tape.gradient(loss, q_net.trainable_variables)"
        ),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    result = run_cli("--static", "--format", "json", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    (record,) = json.loads(result.stdout)["files"]
    (finding,) = record["findings"]
    assert (finding["path"], finding["line"], finding["column"], finding["code"]) == ("nb.ipynb:cell 4", 2, 14, "GC101")
    assert "(cell 4, line 2)" in finding["notes"][0] and "line 6" not in finding["notes"][0]

    nb.cells[3].source = nb.cells[3].source.replace("axis=1)\n", "axis=1)  # noqa: GC101\n")
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    assert run_cli("--static", "nb.ipynb", cwd=tmp_path).returncode == 0

    nb.cells[2].source += "\nx = (1,"
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    (record,) = json.loads(run_cli("--static", "--format", "json", "nb.ipynb", cwd=tmp_path).stdout)["files"]
    assert record["error"]["code"] == "GC901" and "(cell 3, line 3)" in record["error"]["message"]
