"""GC301 by default (issue 36 §3): a ``tf.custom_gradient`` whose gradient is the derivative
of another function is found without ``--check-custom-gradients`` (the mutation operator
``custom_gradient_derivative`` writes the first kind: a ReLU whose gradient is the
identity's), in eager code and in a ``tf.function``, under Keras 3 and tf_keras; the
deliberate look-alikes (a straight-through estimator, a clipped, scaled or reversed
gradient, ``tf.recompute_grad``, a gradient with ``variables=``) and correct custom gradients
stay silent. The tf_keras tests run in the Keras 2 environment (``keras2`` marker)."""

from __future__ import annotations

import importlib.util
import os

import pytest

#: name -> (forward, gradient): each gradient is the derivative of another function, and
#: not the right derivative times one constant.
WRONG = {
    "relu_identity": ("tf.nn.relu(x)", "upstream"),  # the mutation operator's
    "tanh_sigmoid_derivative": ("tf.tanh(x)", "upstream * tf.sigmoid(x) * (1 - tf.sigmoid(x))"),
    "elu_relu_derivative": ("tf.nn.elu(x)", "upstream * tf.cast(x > 0, x.dtype)"),
    "leaky_slopes_swapped": ("tf.where(x > 0, x, 0.1 * x)", "upstream * tf.where(x > 0, 0.1, 1.0)"),
    "softplus_exp_derivative": ("tf.math.log1p(tf.exp(x))", "upstream * tf.exp(x)"),
    "swish_missing_term": ("x * tf.sigmoid(x)", "upstream * tf.sigmoid(x)"),
    "product_rule_missing_term": ("x * tf.sin(x)", "upstream * x * tf.cos(x)"),
    "softmax_wrong_axis": (
        "tf.nn.softmax(x, axis=-1)",
        "tf.nn.softmax(x, axis=-1) * (upstream - tf.reduce_sum(upstream * tf.nn.softmax(x, axis=-1), axis=0))",
    ),
}

#: name -> (forward, gradient): correct, or deliberately not the derivative.
SILENT = {
    "correct_relu": ("tf.nn.relu(x)", "upstream * tf.cast(x > 0, upstream.dtype)"),
    "correct_softplus": ("tf.math.log1p(tf.exp(x))", "upstream * tf.sigmoid(x)"),
    "straight_through_round": ("tf.round(x * 4.0) / 4.0", "upstream"),
    "straight_through_sign": ("tf.sign(x)", "upstream * tf.cast(tf.abs(x) <= 1.0, upstream.dtype)"),
    "clipped_identity": ("tf.identity(x)", "tf.clip_by_norm(upstream, 0.1)"),
    "clipped_relu": ("tf.nn.relu(x)", "tf.clip_by_value(upstream, -1e-3, 1e-3) * tf.cast(x > 0, upstream.dtype)"),
    "gradient_reversal": ("tf.identity(x)", "-0.5 * upstream"),
    "scaled_tanh": ("tf.tanh(x)", "0.1 * upstream * (1 - tf.tanh(x) ** 2)"),
    "masked_identity": ("tf.identity(x)", "upstream * tf.cast(x > 0, upstream.dtype)"),
}

SCRIPT = """\
import numpy as np
import tensorflow as tf
{keras_import}


@tf.custom_gradient
def activation(x):
    def grad(upstream):
        return {grad}

    return {forward}, grad


keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8), keras.layers.Dense(6)])
head = keras.layers.Dense(1)
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 3)).astype("float32")
y = rng.standard_normal((16, 1)).astype("float32")


def step(x, y):
    '''{name}: its own code (autograph caches a converted function by its code, which
    compares equal across files: in-process checks of one step would share it).'''
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(head(activation(2.0 * model(x))) - y))
    return tape.gradient(loss, model.trainable_variables + head.trainable_variables)


{run}
"""

KERAS3 = "import keras"
TF_KERAS = "import tf_keras as keras"
MODES = {"eager": "step(x, y)", "tf.function": "tf.function(step)(x, y)"}
GRAD_LINE = 8  # `def grad(upstream):`, where GC301 points


def _script(forward: str, grad: str, mode: str, keras_import: str) -> str:
    name = f"{forward} {grad}".replace('"', "'")
    return SCRIPT.format(forward=forward, grad=grad, run=MODES[mode], keras_import=keras_import, name=name)


def _codes(result) -> list[tuple[str, int]]:
    assert result.status == "checked", result.error
    return [(f.code, f.line) for f in result.findings]


# -- Keras 3 ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(WRONG))
def test_wrong_derivative_found_by_default(run_script, kind, mode):
    forward, grad = WRONG[kind]
    result = run_script(_script(forward, grad, mode, KERAS3))
    assert _codes(result) == [("GC301", GRAD_LINE)]
    finding = result.findings[0]
    assert "disagrees with finite differences" in finding.message
    assert len(finding.variables) == 4  # both Dense layers below the activation, not the head
    assert any("not a constant multiple" in note for note in finding.notes)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(SILENT))
def test_correct_and_deliberate_custom_gradients_silent(run_script, kind, mode):
    forward, grad = SILENT[kind]
    assert _codes(run_script(_script(forward, grad, mode, KERAS3))) == []


def test_full_check_still_reports_a_scaled_gradient(run_script):
    """A constant factor is left to --check-custom-gradients: it may be deliberate."""
    forward, grad = SILENT["scaled_tanh"]
    source = _script(forward, grad, "eager", KERAS3)
    assert _codes(run_script(source)) == []
    assert _codes(run_script(source, check_custom_gradients=True)) == [("GC301", GRAD_LINE)]


RECOMPUTE = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
block = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(4)])
head = keras.layers.Dense(1)
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 4)).astype("float32")
y = rng.standard_normal((16, 1)).astype("float32")
recomputed = tf.recompute_grad(lambda h: block(h))


def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(head(recomputed(x)) - y))
    return tape.gradient(loss, block.trainable_variables + head.trainable_variables)


{run}
"""

VARIABLES = """\
import numpy as np
import tensorflow as tf

weights = tf.Variable([1.5, -0.5], name="poly")


@tf.custom_gradient
def poly(x):
    def grad(dy, variables=None):
        return dy * weights[0], [tf.stack([tf.reduce_sum(dy * x), tf.reduce_sum(dy)]) for _ in variables]

    return weights[0] * x + weights[1], grad


w = tf.Variable(np.linspace(-1.0, 1.0, 12).astype("float32"), name="w")


def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(poly(tf.tanh(w) * 3.0) - w))
    return tape.gradient(loss, [weights, w])


{run}
"""


@pytest.mark.parametrize("mode", list(MODES))
def test_recompute_grad_silent(run_script, mode):
    assert _codes(run_script(RECOMPUTE.format(run=MODES[mode]))) == []


@pytest.mark.parametrize("mode", ["eager", "tf.function"])
def test_custom_gradient_with_variables_silent(run_script, mode):
    run = "step()" if mode == "eager" else "tf.function(step)()"
    assert _codes(run_script(VARIABLES.format(run=run))) == []


SHARED = """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def activation(x):
    def grad(upstream):
        return upstream

    return tf.nn.relu(x), grad


keras.utils.set_random_seed(0)
model = keras.Sequential(
    [keras.Input((3,))] + [keras.layers.Dense(8, activation=activation) for _ in range(4)] + [keras.layers.Dense(1)]
)
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 3)).astype("float32")
y = rng.standard_normal((16, 1)).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_one_function_used_by_many_layers_is_compared_once(run_script):
    """The default comparison runs on the first call of each custom gradient that reaches
    the loss: one finding for an activation four layers share."""
    assert _codes(run_script(SHARED)) == [("GC301", 8)]


# -- tf_keras (Keras 2) -------------------------------------------------------------------
needs_tf_keras = pytest.mark.skipif(
    importlib.util.find_spec("tf_keras") is None or os.environ.get("TF_USE_LEGACY_KERAS") != "1",
    reason="runs in the Keras 2 environment (tf_keras, TF_USE_LEGACY_KERAS=1)",
)


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(WRONG))
def test_tf_keras_wrong_derivative_found_by_default(run_script, kind, mode):
    forward, grad = WRONG[kind]
    result = run_script(_script(forward, grad, mode, TF_KERAS))
    assert _codes(result) == [("GC301", GRAD_LINE)]
    assert len(result.findings[0].variables) == 4


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(SILENT))
def test_tf_keras_look_alikes_silent(run_script, kind, mode):
    forward, grad = SILENT[kind]
    assert _codes(run_script(_script(forward, grad, mode, TF_KERAS))) == []
