"""Notebooks: ``gradcheck notebook.ipynb`` runs the code cells in order under the tracer
(findings at ``nb.ipynb:cell N`` and the line within the cell, in every format), and
``%load_ext gradcheck`` diagnoses None gradients in the following cells."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradcheck import notebook
from tests.conftest import ROOT, run_cli

nbformat = pytest.importorskip("nbformat")

SETUP = """\
import keras
import numpy as np
import tensorflow as tf
%matplotlib inline
!pip list > /dev/null

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="hidden"), keras.layers.Dense(2, name="out")])
steps = int(open("steps.txt").read())  # a file beside the notebook: cells run from its directory
"""

BROKEN = """\
x = tf.random.normal((8, 4))
for _ in range(steps):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
"""


def write_notebook(directory: Path, *code: str, name: str = "nb.ipynb") -> Path:
    """A notebook of a Markdown cell, then the code cells (so code cell k is cell k + 1)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A training notebook")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in code]
    path = directory / name
    nbformat.write(nb, str(path))
    (directory / "steps.txt").write_text("3\n")
    return path


def test_magics_become_python_line_for_line():
    source = "%matplotlib inline\n!pip install x\nfor i in range(2):\n    %time f(i)\nmodel.fit?\ny = 1"
    assert notebook.to_python(source) == "pass\npass\nfor i in range(2):\n    f(i)\npass\ny = 1"
    assert notebook.to_python("%%bash\necho hi\nls") == "\n\n"
    assert notebook.to_python("%%time\nx = 1") == "\nx = 1"


def test_cell_paths_round_trip():
    assert notebook.cell_path("a/nb.ipynb", 3) == "a/nb.ipynb:cell 3"
    assert notebook.split_cell_path("a/nb.ipynb:cell 3") == ("a/nb.ipynb", 3)
    assert notebook.split_cell_path("train.py") is None


def test_a_notebook_is_diagnosed_at_its_cell_and_line(tmp_path):
    path = write_notebook(tmp_path, SETUP, BROKEN)
    proc = run_cli("--format", "json", str(path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (record,) = json.loads(proc.stdout)["files"]
    assert record["path"] == str(path) and record["steps_checked"] == 1
    (finding,) = record["findings"]
    assert finding["path"] == f"{path}:cell 3"
    assert (finding["code"], finding["line"], finding["column"]) == ("GC102", 4, 31)
    assert finding["variables"] == [
        "sequential/hidden/bias",
        "sequential/hidden/kernel",
        "sequential/out/bias",
        "sequential/out/kernel",
    ]


def test_the_text_output_shows_the_cell(tmp_path):
    path = write_notebook(tmp_path, SETUP, BROKEN)
    proc = run_cli("nb.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("nb.ipynb:cell 3:4:31: GC102 tf.round")
    frame = textwrap.dedent(
        """\
          |
        3 |     with tf.GradientTape() as tape:
        4 |         loss = tf.reduce_mean(tf.round(model(x)))
          |                               ^^^^^^^^^^^^^^^^^^ GC102
        5 |     grads = tape.gradient(loss, model.trainable_variables)
          |
        """
    )
    assert frame in proc.stdout
    assert path.exists()


def test_sarif_and_github_point_into_the_ipynb_file(tmp_path):
    path = write_notebook(tmp_path, SETUP, BROKEN)
    raw = path.read_text().splitlines()
    sarif = json.loads(run_cli("--format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "nb.ipynb"
    line = physical["region"]["startLine"]
    assert "tf.reduce_mean(tf.round(model(x)))" in raw[line - 1]
    assert (result["properties"]["cell"], result["properties"]["cellLine"]) == (3, 4)
    github = run_cli("--format", "github", "nb.ipynb", cwd=tmp_path).stdout
    assert github.startswith(f"::error file=nb.ipynb,line={line},title=GC102 rounding-op (cell 3%2C line 4)::")


def test_a_noqa_comment_in_a_cell_silences_it(tmp_path):
    path = write_notebook(tmp_path, SETUP, BROKEN.replace("model(x)))", "model(x)))  # noqa: GC102"))
    proc = run_cli("--format", "json", str(path))
    (record,) = json.loads(proc.stdout)["files"]
    assert record["findings"] == [] and record["error"] is None, proc.stdout


def test_a_syntax_error_names_the_cell(tmp_path):
    path = write_notebook(tmp_path, SETUP, "x = (1,\n")
    proc = run_cli("--format", "json", str(path))
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"]["code"] == "GC901"
    assert record["error"]["message"].startswith("SyntaxError:") and "(cell 3, line 1)" in record["error"]["message"]


def test_a_notebook_without_code_and_a_broken_file(tmp_path):
    empty = write_notebook(tmp_path, name="empty.ipynb")
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    proc = run_cli("--format", "json", str(empty), str(broken))
    errors = {Path(r["path"]).name: r["error"] for r in json.loads(proc.stdout)["files"]}
    assert errors["empty.ipynb"]["code"] == "GC902"
    assert errors["broken.ipynb"]["code"] == "GC901" and "not a readable notebook" in errors["broken.ipynb"]["message"]


def test_a_failing_cell_is_named_in_the_reason(tmp_path):
    path = write_notebook(tmp_path, SETUP, "raise ValueError('no data')")
    (record,) = json.loads(run_cli("--format", "json", "nb.ipynb", cwd=tmp_path).stdout)["files"]
    assert record["error"]["code"] == "GC901"
    assert record["error"]["message"] == "the script raised ValueError: no data (at nb.ipynb:cell 3:1)"
    assert path.exists()


IPYTHON_SESSION = """\
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

ip = start_ipython()
ip.display_formatter.active_types = ["text/plain", "text/html"]
ip.run_cell("%load_ext gradcheck", store_history=True)
ip.run_cell(
    "import keras, tensorflow as tf\\n"
    "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name='dense')])",
    store_history=True,
)
cell = (
    "x = tf.random.normal((8, 4))\\n"
    "with tf.GradientTape() as tape:\\n"
    "    loss = tf.reduce_mean(tf.round(model(x)))\\n"
    "grads = tape.gradient(loss, model.trainable_variables)\\n"
)
with capture_output() as shown:
    result = ip.run_cell(cell, store_history=True)
assert result.error_in_exec is None, result.error_in_exec
(output,) = shown.outputs
with capture_output() as again:
    ip.run_cell("%unload_ext gradcheck", store_history=True)
    ip.run_cell(cell, store_history=True)
import json, sys
json.dump({"html": output.data["text/html"], "text": output.data["text/plain"], "after_unload": len(again.outputs)}, sys.stdout)
"""


IPYTHON_TRACED_STEP = """\
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

ip = start_ipython()
ip.run_cell("%load_ext gradcheck", store_history=True)
ip.run_cell(
    "import keras, tensorflow as tf\\n"
    "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation='relu',"
    " bias_initializer=keras.initializers.Constant(-50.0)), keras.layers.Dense(1)])\\n"
    "@tf.function\\n"
    "def step(x):\\n"
    "    with tf.GradientTape() as tape:\\n"
    "        loss = tf.reduce_mean(tf.square(model(x)))\\n"
    "    return tape.gradient(loss, model.trainable_variables)\\n",
    store_history=True,
)
with capture_output() as shown:
    result = ip.run_cell("grads = step(tf.random.uniform((8, 4)))", store_history=True)
assert result.error_in_exec is None, result.error_in_exec
import json, sys
json.dump({"text": [o.data["text/plain"] for o in shown.outputs]}, sys.stdout)
"""


IPYTHON_KERAS_ERROR = """\
from IPython.testing.globalipapp import start_ipython

ip = start_ipython()
ip.run_cell("%load_ext gradcheck", store_history=True)
ip.run_cell(
    "import keras, numpy as np, tensorflow as tf\\n"
    "class Q(keras.Model):\\n"
    "    def train_step(self, data):\\n"
    "        x, y = data\\n"
    "        with tf.GradientTape() as tape:\\n"
    "            idx = tf.cast(tf.math.argmin(self(x), axis=1), tf.float32)\\n"
    "            loss = tf.reduce_mean(tf.square(y - idx))\\n"
    "        grads = tape.gradient(loss, self.trainable_variables)\\n"
    "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\\n"
    "        return {'loss': loss}\\n",
    store_history=True,
)
result = ip.run_cell(
    "inputs = keras.Input((4,)); model = Q(inputs, keras.layers.Dense(2)(inputs))\\n"
    "model.compile(optimizer='sgd')\\n"
    "model.fit(np.zeros((8, 4), 'float32'), np.zeros((8,), 'float32'), epochs=1, verbose=0)\\n",
    store_history=True,
)
import json, sys
json.dump({"error": str(result.error_in_exec)}, sys.stdout)
"""


def test_the_keras_error_in_a_cell_names_cells_as_ipython_does():
    shown = _ipython_session(IPYTHON_KERAS_ERROR)
    assert "No gradients provided" in shown["error"] and "GC101" in shown["error"], shown
    assert "Cell In[2]:6:" in shown["error"] and "<ipython-input" not in shown["error"], shown


def _ipython_session(source: str) -> dict:
    """Run ``source`` (a real IPython shell) in a fresh interpreter; the JSON it printed last."""
    pytest.importorskip("IPython")
    done = subprocess.run(
        [sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_ipython_extension_shows_a_traced_steps_value_finding_in_its_cell():
    # one traced step, nothing run after it: its value check reports as the cell ends
    shown = _ipython_session(IPYTHON_TRACED_STEP)
    assert len(shown["text"]) == 1 and "GC201" in shown["text"][0], shown


def test_the_ipython_extension_displays_a_diagnosis():
    shown = _ipython_session(IPYTHON_SESSION)
    assert shown["text"].startswith("Cell In[3]:3:27: GC102 tf.round")
    assert "GC102" in shown["html"] and "Cell In[3], line 3" in shown["html"]
    assert "&#9986; Round" in shown["html"] and "sequential/dense/kernel" in shown["html"]
    assert shown["after_unload"] == 0
