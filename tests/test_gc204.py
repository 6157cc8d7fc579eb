"""GC204 non-finite-loss: a NaN or Inf loss is reported at the first forward op that made a
non-finite value from finite inputs (or at the data, when the batch already holds one), with
what made it so; non-finite values the loss never sees are not reported."""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

DECORATORS = pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])

STEP = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(8, 4)


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        y = model(x)
        value = {expr}
        loss = tf.reduce_mean(value)
    return tape.gradient(loss, model.trainable_variables)


train_step(x)
"""
VALUE_LINE = 14

CAUSES = {
    "log-negative": ("tf.math.log(-tf.abs(y) - 1.0)", "log", "log of a negative value", "NaN"),
    "log-zero": ("tf.math.log(tf.nn.relu(-tf.abs(y)))", "log", "log of 0", "infinite"),
    "sqrt-negative": ("tf.sqrt(-tf.abs(y) - 1.0)", "sqrt", "square root of a negative value", "NaN"),
    "division-by-zero": ("y / (x[:, :1] - x[:, :1])", "div", "divides by zero", "NaN"),
    "exp-overflow": ("tf.exp(100.0 + tf.abs(y))", "exp", "overflows to inf", "infinite"),
    "float16-overflow": ("tf.square(tf.cast(tf.abs(y) + 300.0, tf.float16))", "float16", "float16", "infinite"),
    "masked-softmax": (
        "tf.nn.softmax(tf.concat([y, y], axis=1) + tf.fill([8, 2], -np.inf), axis=-1)",
        "masked-softmax",
        "masked with -inf at every position",
        "NaN",
    ),
    "where-selected-branch": (
        "tf.where(y > 100.0, y / (x[:, :1] - x[:, :1]), tf.math.log(-tf.abs(y) - 1.0))",
        "log",
        "log of a negative value",
        "NaN",
    ),
    # 1053's shape: a mean over what a mask (or a replica's share of a small batch) left empty
    "empty-mean": (
        "tf.reduce_mean(tf.boolean_mask(y, tf.abs(y) > 1e9)) + y",
        "empty-mean",
        "mean of an empty tensor",
        "NaN",
    ),
    "zero-times-inf": ("tf.nn.relu(-tf.abs(y)) * tf.math.log(tf.nn.relu(-tf.abs(y)))", "zero-inf", "log of 0", "NaN"),
}


def _only(result):
    assert result.error is None, result.error
    assert len(result.findings) == 1, [f"{f.line}: {f.code} {f.message}" for f in result.findings]
    return result.findings[0]


@DECORATORS
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_the_op_that_made_the_loss_non_finite_is_named_at_its_line(run_script, decorator, cause):
    expr, variant, words, kind = CAUSES[cause]
    finding = _only(run_script(STEP.format(decorator=decorator, expr=expr)))
    assert (finding.code, finding.line) == ("GC204", VALUE_LINE), finding.message
    assert finding._fields["variant"] == variant, finding.message
    assert words in finding.message and finding.message.endswith(f"the loss is {kind}"), finding.message
    assert finding.fix and finding.variables == ["sequential/dense/bias", "sequential/dense/kernel"]


@DECORATORS
def test_zero_times_inf_says_so_and_offers_xlogy(run_script, decorator):
    finding = _only(run_script(STEP.format(decorator=decorator, expr=CAUSES["zero-times-inf"][0])))
    assert any(note.startswith("0 × inf is NaN") for note in finding.notes), finding.notes
    assert "xlogy" in finding.fix


@DECORATORS
@pytest.mark.parametrize("square", ["tf.square({})", "tf.math.pow({}, 2)"], ids=["square", "pow"])
def test_a_log_of_a_squashed_value_offers_the_unscaled_tanh(run_script, decorator, square):
    # 1057: `tf.math.pow(action, 2)` is a square too
    expr = "tf.math.log(1.0 - " + square.format("2.0 * tf.tanh(10.0 * y + 5.0)") + " + 1e-6)"
    finding = _only(run_script(STEP.format(decorator=decorator, expr=expr)))
    assert (finding.line, finding._fields["variant"]) == (VALUE_LINE, "log-tanh"), finding.message
    assert "softplus" in finding.fix


@DECORATORS
@pytest.mark.parametrize(
    "expr", ["tf.math.log(1e-10 + tf.tanh(y - 5.0))", "tf.math.log(y - 10.0 + 1e-7)"], ids=["tanh", "linear"]
)
def test_a_log_of_an_output_that_can_be_negative_offers_a_positive_output(run_script, decorator, expr):
    # a tanh decoder's reconstruction log-likelihood (1005's shape): an epsilon cannot help
    finding = _only(run_script(STEP.format(decorator=decorator, expr=expr)))
    assert (finding.line, finding._fields["variant"]) == (VALUE_LINE, "log-signed"), finding.message
    assert "sigmoid" in finding.fix and "logits" in finding.fix


NAN_BATCH = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")
x[3, 2] = np.nan


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
    return tape.gradient(loss, model.trainable_variables)


train_step(x)
"""


def test_a_nan_in_the_batch_is_reported_where_the_data_entered_eager(run_script):
    finding = _only(run_script(NAN_BATCH.format(decorator="")))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 14, "data"), finding.message
    assert "the batch already holds 1 NaN" in finding.message
    assert "np.isnan" in finding.fix


def test_a_nan_in_the_batch_is_reported_where_the_data_entered_tf_function(run_script):
    finding = _only(run_script(NAN_BATCH.format(decorator="@tf.function")))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 18, "data"), finding.message


FIT = """\
import keras
import numpy as np

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
{setup}
model.compile(optimizer="sgd", loss={loss})
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
"""


def test_a_nan_in_the_data_given_to_fit_points_at_the_fit_call(run_script):
    finding = _only(run_script(FIT.format(setup="x[5, 1] = np.nan", loss='"mse"')))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 10, "data"), finding.message


def test_a_loss_function_that_takes_a_log_of_a_negative_value_under_fit(run_script):
    setup = textwrap.dedent(
        """\
        def log_error(y_true, y_pred):
            return keras.ops.mean(keras.ops.log(y_pred - 100.0 - y_true))"""
    )
    finding = _only(run_script(FIT.format(setup=setup, loss="log_error")))
    # the log of a linear layer's output: a positive output (sigmoid, softplus) is the fix
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 9, "log-signed"), finding.message


# -- controls: non-finite values the loss never sees ---------------------------------------
MASK = """\
import keras
import numpy as np
import tensorflow as tf

proj = keras.layers.Dense(4)
x = np.random.rand(2, 5, 4).astype("float32")
mask = np.triu(np.full((5, 5), -np.inf, "float32"), k=1)


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        h = proj(x)
        attention = tf.nn.softmax(tf.matmul(h, h, transpose_b=True) + mask, axis=-1)
        loss = tf.reduce_mean(tf.square(tf.matmul(attention, h))){extra}
    return tape.gradient(loss, proj.trainable_variables)


train_step(x)
"""

WHERE = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")
totals = np.random.rand(8, 1).astype("float32")
counts = np.array([[0.0], [2.0]] * 4, "float32")


{decorator}
def train_step(x, totals, counts):
    with tf.GradientTape() as tape:
        mean = tf.where(counts > 0, tf.math.divide(totals, counts), 0.0)  # inf where counts == 0
        loss = tf.reduce_mean(tf.square(model(x) - mean))
    return tape.gradient(loss, model.trainable_variables)


train_step(x, totals, counts)
"""

UNREAD_COLUMN = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
table = np.random.rand(8, 4).astype("float32")
table[:, 3] = np.nan  # a column the model never reads


{decorator}
def train_step(table):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(table[:, :3]) - 1.0))
    return tape.gradient(loss, model.trainable_variables)


train_step(table)
"""


@DECORATORS
def test_a_mean_made_safe_for_an_empty_mask_is_silent(run_script, decorator):
    expr = "tf.math.divide_no_nan(tf.reduce_sum(tf.boolean_mask(y, tf.abs(y) > 1e9)), 0.0) + y"
    result = run_script(STEP.format(decorator=decorator, expr=expr))
    assert result.error is None and result.findings == [], [f.message for f in result.findings]


@DECORATORS
@pytest.mark.parametrize("control", ["mask", "where", "unread-column"])
def test_non_finite_values_the_loss_never_sees_are_not_reported(run_script, decorator, control):
    source = {"mask": MASK.replace("{extra}", ""), "where": WHERE, "unread-column": UNREAD_COLUMN}[control]
    result = run_script(source.format(decorator=decorator))
    assert result.error is None, result.error
    assert result.steps_checked >= 1
    assert result.findings == [], [f"{f.line}: {f.code} {f.message}" for f in result.findings]


@DECORATORS
def test_a_mask_is_not_blamed_for_a_nan_made_elsewhere(run_script, decorator):
    extra = " + tf.math.log(tf.reduce_min(h) - 10.0)"
    finding = _only(run_script(MASK.replace("{extra}", extra).format(decorator=decorator)))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 15, "log"), finding.message


# -- tf_keras (Keras 2) -----------------------------------------------------------------------
FIT_KERAS2 = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
{setup}
model.compile(optimizer="sgd", loss={loss})
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
"""
LOG_ERROR_KERAS2 = """\
def log_error(y_true, y_pred):
    return tf.reduce_mean(tf.math.log(y_pred - 100.0 - y_true))"""


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
@pytest.mark.parametrize(
    ("setup", "loss", "line", "variant"),
    [("x[5, 1] = np.nan", '"mse"', 10, "data"), (LOG_ERROR_KERAS2, "log_error", 9, "log")],
    ids=["nan-in-data", "log-of-negative"],
)
def test_tf_keras_fit(tmp_path, setup, loss, line, variant):
    from tests.conftest import run_cli

    script = tmp_path / "train.py"
    script.write_text(FIT_KERAS2.format(setup=setup, loss=loss), encoding="utf-8")
    proc = run_cli(str(script), "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    findings = [f for file in json.loads(proc.stdout)["files"] for f in file["findings"]]
    assert [(f["code"], f["line"]) for f in findings] == [("GC204", line)], proc.stdout + proc.stderr
    assert variant in json.dumps(findings[0])


MIXED_FIT = """\
import keras
import numpy as np

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, kernel_initializer="ones"), keras.layers.Dense(1)])
x = np.full((16, 4), 3e4, "float32")
y = np.zeros((16, 1), "float32")
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
"""


def test_a_float16_overflow_under_mixed_precision_is_named_with_its_fix(tmp_path):
    from tests.conftest import run_cli

    script = tmp_path / "train.py"
    script.write_text(MIXED_FIT, encoding="utf-8")
    proc = run_cli(str(script), "--format", "json")
    findings = [f for file in json.loads(proc.stdout)["files"] for f in file["findings"]]
    assert [(f["code"], f["line"]) for f in findings] == [("GC204", 5)], proc.stdout + proc.stderr
    assert "float16" in findings[0]["message"] and "float32" in findings[0]["fix"], findings[0]


def test_assert_gradients_flow_fails_with_the_gc204_diagnosis():
    import keras
    import numpy as np
    import tensorflow as tf

    import gradcheck
    from gradcheck.api import GradientFlowError

    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32")
    gradcheck.assert_gradients_flow(model, (x, y))  # a finite loss passes
    x[2, 0] = np.nan
    with pytest.raises(GradientFlowError, match="GC204 the batch already holds 1 NaN"):
        gradcheck.assert_gradients_flow(model, (x, y))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.sqrt(model(x) - 10.0))
        return tape.gradient(loss, model.trainable_variables)

    with pytest.raises(GradientFlowError, match=r"GC204 .* square root of a negative value"):
        gradcheck.assert_gradients_flow(step, np.random.rand(8, 4).astype("float32"))


LATER = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")


{decorator}
def train_step(x, step):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.math.log(tf.abs(model(x)) + 1.0 - step))
    return tape.gradient(loss, model.trainable_variables)


for step in range(4):
    train_step(x, tf.constant(float(step)))
"""


@DECORATORS
def test_a_loss_that_goes_non_finite_at_a_later_step_is_diagnosed_within_the_steps_checked(run_script, decorator):
    source = LATER.format(decorator=decorator)
    assert run_script(source).findings == []  # the first step's loss is finite
    finding = _only(run_script(source, steps=3))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 13, "log"), finding.message


DISTRIBUTED_FIT = """\
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
import keras

with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
x[3, 1] = np.nan
model.fit(x, y, batch_size=16, epochs=1, verbose=0)
"""


def test_a_nan_in_the_data_of_a_distributed_fit_is_one_finding_at_the_fit_call(tmp_path):
    from tests.conftest import run_cli

    script = tmp_path / "train.py"
    script.write_text(DISTRIBUTED_FIT, encoding="utf-8")
    proc = run_cli(str(script), "--format", "json")
    findings = [f for file in json.loads(proc.stdout)["files"] for f in file["findings"]]
    assert [(f["code"], f["line"]) for f in findings] == [("GC204", 15)], proc.stdout + proc.stderr


def test_watch_reports_an_eager_loss_that_turns_nan_at_a_later_step():
    import keras
    import numpy as np
    import tensorflow as tf

    import gradcheck

    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    x = np.random.rand(8, 4).astype("float32")
    with gradcheck.watch() as report:
        for step in range(5):  # finite at steps 0 and 1, NaN from step 2 on
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.math.log(tf.abs(model(x)) + 1.0 - step))
            tape.gradient(loss, model.trainable_variables)
    assert [(f.code, f._fields["variant"]) for f in report.findings] == [("GC204", "log")], report.to_text()
    assert "log of a negative value" in report.findings[0].message


# -- sessions that stay on: install() / watch() catch a loss that turns non-finite later ---
LOSS_SCALE = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, kernel_initializer="ones")])
x = np.ones((8, 4), "float32")
# a loss scale too high for the loss: the scaled loss overflows, the optimizer skips the step
# and halves the scale (how dynamic loss scaling finds its scale)
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.01), initial_scale=2.0**127)


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))  # 16, finite; scaled: inf
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)


train_step(x)
"""

CONTROLS = {
    "mask": MASK.replace("{extra}", ""),
    "where": WHERE,
    "unread-column": UNREAD_COLUMN,
    "loss-scale-overflow": LOSS_SCALE,
}


@DECORATORS
def test_a_scaled_loss_that_overflows_is_the_loss_scale_optimizers_business(run_script, decorator):
    result = run_script(LOSS_SCALE.format(decorator=decorator))
    assert result.error is None, result.error
    assert result.steps_checked >= 1
    assert result.findings == [], [f"{f.line}: {f.code} {f.message}" for f in result.findings]


@DECORATORS
@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_watch_is_silent_on_non_finite_values_the_loss_never_sees(tmp_path, decorator, control):
    """Each control's step run four times under ``watch()`` (the guard on every step)."""
    import keras

    import gradcheck

    keras.backend.clear_session()
    source = CONTROLS[control].format(decorator=decorator)
    last = source.rstrip().splitlines()[-1]  # the step's call
    path = tmp_path / "control.py"
    path.write_text(source + "\n".join([last] * 3) + "\n", encoding="utf-8")
    with gradcheck.watch() as report:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {"__name__": "control"})
    assert report.findings == [], report.to_text()
    assert report.files[0].steps_checked >= 1


def _graph_op_types(function, *args) -> set[str]:
    graph = function.get_concrete_function(*args).graph
    return {op.type for op in graph.get_operations()} | {
        node.op for f in graph.as_graph_def().library.function for node in f.node_def
    }


def test_watch_reports_a_traced_loss_that_turns_nan_at_a_later_step_without_a_python_op():
    """The traced step is guarded while watch() is on, with no Python op in its graph (a
    Python op anywhere in a function's library slows every call); the first non-finite step
    is diagnosed once, at the op and line, and training goes on as without gradcheck."""
    import keras
    import numpy as np
    import tensorflow as tf

    import gradcheck

    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.0)
    x = np.random.rand(8, 4).astype("float32")

    @tf.function
    def train_step(x, step):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.math.log(tf.abs(model(x)) + 1.0 - step))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    losses = []
    with gradcheck.watch() as report:
        for step in range(6):  # finite at steps 0 and 1, NaN from step 2 on
            losses.append(float(train_step(x, tf.constant(float(step)))))
        assert not {"EagerPyFunc", "PyFunc"} & _graph_op_types(train_step, x, tf.constant(0.0))
    assert np.isfinite(losses[:2]).all() and np.isnan(losses[2:]).all()
    found = [(f.code, f._fields["variant"], f.line) for f in report.findings]
    line = train_step.python_function.__code__.co_firstlineno + 3
    assert found == [("GC204", "log", line)], report.to_text()
    assert "log of a negative value" in report.findings[0].message


LATER_FIT = """\
import keras
import numpy as np

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(64, 4).astype("float32")
y = np.random.rand(64, 1).astype("float32") + 1.0
y[40] = -1.0  # in the third batch of 16


def log_error(y_true, y_pred):
    return keras.ops.mean(keras.ops.square(keras.ops.log(y_true) - y_pred))


model.compile(optimizer="sgd", loss=log_error, run_eagerly={eager})
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
"""


@pytest.mark.parametrize("eager", [False, True], ids=["graph", "eager"])
def test_install_reports_a_fit_loss_that_turns_nan_at_a_later_batch(tmp_path, eager):
    import io

    import keras
    import numpy as np

    import gradcheck

    keras.backend.clear_session()
    path = tmp_path / "train.py"
    path.write_text(LATER_FIT.format(eager=eager), encoding="utf-8")
    namespace = {"__name__": "train"}
    out = io.StringIO()
    gradcheck.install(stream=out)
    try:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    finally:
        gradcheck.uninstall()
    assert np.isnan(namespace["history"].history["loss"]).all()  # as without gradcheck
    text = out.getvalue()
    assert text.count(" GC204 ") == 1, text
    assert "train.py:12:" in text and "log of a negative value" in text, text


DISTRIBUTED_INSTALL = """\
import io
import sys

import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
import keras

import gradcheck

with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
x = np.random.rand(64, 4).astype("float32")
y = np.random.rand(64, 1).astype("float32")
x[40, 1] = np.nan  # the third batch, one replica's half of it
out = io.StringIO()
gradcheck.install(stream=out)
model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
gradcheck.uninstall()
sys.stdout.write(out.getvalue())
"""


def test_install_reports_a_nan_batch_of_a_distributed_fit_once(tmp_path):
    """One finding for the step, not one per replica, and none for the steps after it
    (whose weights the NaN update made NaN)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    script = tmp_path / "train.py"
    script.write_text(DISTRIBUTED_INSTALL, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count(" GC204 ") == 1, proc.stdout
    assert "train.py:22:1: GC204 the batch already holds 1 NaN" in proc.stdout, proc.stdout


NAN_LITERAL = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        x = tf.concat([x[:1] * float("nan"), x[1:]], axis=0)
        loss = tf.reduce_mean(tf.square(model(x)))
    return tape.gradient(loss, model.trainable_variables)


train_step(x)
"""


@DECORATORS
def test_a_nan_written_into_the_batch_inside_the_step_is_reported_at_that_line(run_script, decorator):
    """In a traced step too: the NaN is a constant of the step's graph, not data fed to it."""
    finding = _only(run_script(NAN_LITERAL.format(decorator=decorator)))
    assert (finding.code, finding.line, finding._fields["variant"]) == ("GC204", 12, "data"), finding.message


LATER_FIT_KERAS2 = """\
import numpy as np
from tensorflow import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(64, 4).astype("float32")
y = np.random.rand(64, 1).astype("float32")
x[40, 1] = np.nan  # in the third batch of 16
model.compile(optimizer="sgd", loss="mse")
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
"""


@pytest.mark.keras2
@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")
def test_install_reports_a_nan_batch_of_a_tf_keras_fit_at_a_later_step(tmp_path):
    """tf_keras reads the batch from its iterator inside the traced step: data, at the fit call."""
    import io

    import gradcheck

    path = tmp_path / "train.py"
    path.write_text(LATER_FIT_KERAS2, encoding="utf-8")
    out = io.StringIO()
    gradcheck.install(stream=out)
    try:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {"__name__": "train"})
    finally:
        gradcheck.uninstall()
    text = out.getvalue()
    assert text.count(" GC204 ") == 1, text
    assert "train.py:9:" in text and "the batch already holds 1 NaN" in text, text


IPYTHON_LATER_NAN = """\
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

ip = start_ipython()
ip.run_cell("%load_ext gradcheck", store_history=True)
ip.run_cell(
    "import keras, numpy as np, tensorflow as tf\\n"
    "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\\n"
    "x = np.random.rand(8, 4).astype('float32')\\n"
    "@tf.function\\n"
    "def step(x, shift):\\n"
    "    with tf.GradientTape() as tape:\\n"
    "        loss = tf.reduce_mean(tf.math.log(tf.abs(model(x)) + 1.0 - shift))\\n"
    "    return tape.gradient(loss, model.trainable_variables)\\n",
    store_history=True,
)
shown = []
for shift in (0.0, 0.5, 3.0, 4.0):  # one cell per step: finite, finite, NaN, NaN
    with capture_output() as out:
        result = ip.run_cell(f"grads = step(x, tf.constant({shift}))", store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    shown.append([o.data["text/plain"] for o in out.outputs])
import json, sys
json.dump({"shown": shown}, sys.stdout)
"""


def test_load_ext_shows_a_traced_loss_that_turns_nan_under_the_cell_that_ran_it():
    from tests.test_notebook import _ipython_session

    shown = _ipython_session(IPYTHON_LATER_NAN)["shown"]
    assert [len(cell) for cell in shown] == [0, 0, 1, 0], shown
    assert "GC204" in shown[2][0] and "log of a negative value" in shown[2][0], shown


TWO_HEADS = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)], name="actor")
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)], name="critic")
x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(8, 4)


{decorator}
def train_step(x):
    with tf.GradientTape() as tape:
        probs = tf.nn.softmax(50.0 * actor(x))
        policy = -tf.reduce_mean(tf.math.log({probs}))
        value = tf.reduce_mean(tf.square(critic(x) - 1.0))
        loss = policy + value
    return tape.gradient(loss, actor.trainable_variables + critic.trainable_variables)


train_step(x)
"""


@DECORATORS
def test_a_nan_policy_term_names_the_policys_variables_not_the_value_heads(run_script, decorator):
    # the NaN reaches only what the log's input depends on: the critic's gradients stay finite
    # (eager: known from the gradients' values; traced: from the ops the log depends on)
    result = run_script(TWO_HEADS.format(decorator=decorator, probs="tf.where(probs < 1e-3, 0.0, probs)"))
    assert result.error is None, result.error
    assert [(f.code, f.line, sorted(f.variables)) for f in result.findings] == [
        ("GC204", 15, ["actor/dense/bias", "actor/dense/kernel"])
    ]
    assert run_script(TWO_HEADS.format(decorator=decorator, probs="probs + 1e-7")).findings == []
