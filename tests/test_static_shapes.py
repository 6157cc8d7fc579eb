"""Bug shapes of issue 25 the static engine finds, each with a correct look-alike that must
stay silent (for every rule). INVALID sources mark each culprit with ``# expect: GCxxx``;
the findings must be exactly those (line, code) pairs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.static import check_notebook, check_source
from tests.test_static_engine import expected, found

INVALID: dict[str, str] = {}
VALID: dict[str, str] = {}

# --- GC111: an op TensorFlow's registry has no gradient for (from the shipped table) -----

INVALID["gc111-adjust-saturation-in-layer-call"] = """\
import keras
import tensorflow as tf


class LearnableSaturation(keras.layers.Layer):
    def build(self, input_shape):
        self.factor = self.add_weight(shape=(), initializer="ones", name="factor")

    def call(self, images):
        return tf.image.adjust_saturation(images, self.factor)  # expect: GC111


layer = LearnableSaturation()
opt = keras.optimizers.Adam()
x = tf.zeros((2, 8, 8, 3))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(layer(x))
grads = tape.gradient(loss, layer.trainable_variables)
opt.apply_gradients(zip(grads, layer.trainable_variables))
"""
VALID["gc111-adjust-saturation-on-the-input-batch"] = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Conv2D(4, 3), keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1)])
opt = keras.optimizers.Adam()
images = tf.random.uniform((2, 8, 8, 3))
with tf.GradientTape() as tape:
    augmented = tf.image.adjust_saturation(images, 1.5)
    loss = tf.reduce_mean(model(augmented))
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
"""

INVALID["gc111-area-resize-of-the-output"] = """\
import keras
import tensorflow as tf

decoder = keras.Sequential([keras.layers.Dense(64), keras.layers.Reshape((8, 8, 1))])
target = tf.zeros((2, 4, 4, 1))
with tf.GradientTape() as tape:
    small = tf.image.resize(decoder(tf.zeros((2, 4))), [4, 4], method="area")  # expect: GC111
    loss = tf.reduce_mean(tf.square(small - target))
grads = tape.gradient(loss, decoder.trainable_variables)
"""
VALID["gc111-bilinear-resize-of-the-output"] = INVALID["gc111-area-resize-of-the-output"].replace(
    'method="area")  # expect: GC111', 'method="bilinear")'
)

# --- GC301: a tf.custom_gradient whose gradient function never reads its upstream ---------

_CUSTOM = """\
import keras
import tensorflow as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):{mark}
        return {grad}

    return tf.math.log(1 + e), grad


model = keras.Sequential([keras.layers.Dense(4)])
x = tf.zeros((8, 3))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(log1pexp(model(x)) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
"""
INVALID["gc301-custom-gradient-that-forgets-dy"] = _CUSTOM.format(mark="  # expect: GC301", grad="1 - 1 / (1 + e)")
VALID["gc301-custom-gradient-that-chains"] = _CUSTOM.format(mark="", grad="dy * (1 - 1 / (1 + e))")
VALID["gc301-straight-through-estimator"] = """\
import keras
import tensorflow as tf


@tf.custom_gradient
def binarize(x):
    def grad(dy):
        return tf.ones_like(x)

    return tf.round(x), grad


model = keras.Sequential([keras.layers.Dense(4)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(binarize(model(tf.zeros((8, 3)))))
grads = tape.gradient(loss, model.trainable_variables)
"""

_PASS_THROUGH = """\
import keras
import tensorflow as tf


@tf.custom_gradient
def pass_through(x):
    def grad(upstream):{mark}
        return {grad}

    return tf.identity(x), grad


model = keras.Sequential([keras.layers.Dense(4)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(pass_through(model(tf.zeros((8, 3)))) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
"""
INVALID["gc301-identity-with-a-gradient-of-ones"] = _PASS_THROUGH.format(
    mark="  # expect: GC301", grad="tf.ones_like(x)"
)
VALID["gc301-identity-chaining-dy"] = _PASS_THROUGH.format(mark="", grad="upstream * tf.ones_like(x)")
VALID["gc301-a-zero-gradient-on-purpose"] = _PASS_THROUGH.format(mark="", grad="tf.zeros_like(x)")

# --- GC115: all the variables of a Sequential that ``add`` gave a BatchNormalization -----

_GAN = """\
import tensorflow as tf
from tensorflow.keras import layers


def make_generator_model():
    model = tf.keras.Sequential()
    model.add(layers.Dense(7 * 7 * 8, use_bias=False, input_shape=(100,)))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())
    model.add(layers.Reshape((7, 7, 8)))
    return model


generator = make_generator_model()
critic = tf.keras.Sequential([layers.Flatten(), layers.Dense(1)])
g_opt = tf.keras.optimizers.Adam(1e-4)


@tf.function
def train_step(noise):
    with tf.GradientTape() as gen_tape:
        g_loss = -tf.reduce_mean(critic(generator(noise, training=True)))
    g_grads = gen_tape.gradient(g_loss, generator.{attr}){mark}
    g_opt.apply_gradients(zip(g_grads, generator.{attr}))
"""
INVALID["gc115-generator-variables-with-added-batchnorm"] = _GAN.format(attr="variables", mark="  # expect: GC115")
VALID["gc115-generator-trainable-variables"] = _GAN.format(attr="trainable_variables", mark="")
VALID["gc115-added-layers-without-state"] = """\
import tensorflow as tf

generator = tf.keras.Sequential()
generator.add(tf.keras.layers.Dense(8))
generator.add(tf.keras.layers.LeakyReLU())
generator.add(tf.keras.layers.Dense(2))
opt = tf.keras.optimizers.Adam()


def step(z):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(generator(z, training=True) ** 2)
    grads = tape.gradient(loss, generator.variables)
    opt.apply_gradients(zip(grads, generator.variables))
"""

# --- GC108: a tf.Module's weight made in __init__ and never read in __call__ --------------

_MODULE = """\
import tensorflow as tf


class Linear(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.ones((3, 1)))
        self.b = tf.Variable(tf.zeros((1,)))

    def __call__(self, x):
        return tf.matmul(x, self.w){bias}


lin = Linear()
opt = tf.keras.optimizers.SGD()
x = tf.zeros((2, 3))
y = tf.zeros((2, 1))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean((lin(x) - y) ** 2)
grads = tape.gradient(loss, lin.trainable_variables){mark}
opt.apply_gradients(zip(grads, lin.trainable_variables))
"""
INVALID["gc108-module-bias-never-added"] = _MODULE.format(bias="", mark="  # expect: GC108")
VALID["gc108-module-bias-added"] = _MODULE.format(bias=" + self.b", mark="")

# --- GC105: a host escape in an overridden train_step around layers passed in -------------

_TRAINER = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Trainer(keras.Model):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def call(self, x):
        return self.head(self.encoder(x))

    def weighted(self, errors):
        return errors * {weights}

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            errors = tf.square(self(x, training=True) - y)
            loss = tf.reduce_sum(self.weighted({errors})){mark}
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}


model = Trainer(keras.Sequential([keras.layers.Dense(8)]), keras.layers.Dense(1))
model.compile(optimizer="adam", run_eagerly=True)
model.fit(np.zeros((8, 3)), np.zeros((8, 1)), epochs=1)
"""
INVALID["gc105-numpy-in-train-step-of-a-trainer"] = _TRAINER.format(
    weights="np.mean(errors, axis=0)", errors="errors.numpy()", mark="  # expect: GC105"
)
VALID["gc105-tensor-ops-in-train-step-of-a-trainer"] = _TRAINER.format(
    weights="tf.reduce_mean(errors, axis=0)", errors="errors", mark=""
)

# --- GC109: TensorFlow Probability variables used when the distribution is built -----------

_TFP = """\
import tensorflow as tf
import tensorflow_probability as tfp

tfd, tfb = tfp.distributions, tfp.bijectors


class Model(tf.Module):
    def __init__(self):
        self.loc = tf.Variable(0.0)
        self.scale = tfp.util.TransformedVariable(1.0, bijector=tfb.Exp())

    def __call__(self):
        return tfd.Normal(loc=self.loc, scale=self.scale * tf.ones(()))


model = Model()
opt = tf.keras.optimizers.Adam()
data = tf.random.normal((100,))
{before}
for _ in range(10):
    with tf.GradientTape() as tape:
{inside}
        loss = -tf.reduce_mean(dist.log_prob(data))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""
INVALID["gc109-distribution-built-before-the-tape"] = _TFP.format(
    before="dist = model()  # expect: GC109", inside="        pass"
)
VALID["gc109-distribution-built-on-the-tape"] = _TFP.format(before="", inside="        dist = model()")


# --- watched slices and second derivatives ----------------------------------------------

_SLICE = """\
import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
x = tf.random.normal((8, 3))
with tf.GradientTape() as tape:
    tape.watch(x)
    loss = tf.reduce_sum(model(x))
{request}
"""
INVALID["gc108-gradient-asked-for-a-slice"] = _SLICE.format(request="g = tape.gradient(loss, x[:, 0])  # expect: GC108")
INVALID["gc108-gradient-asked-for-a-gather"] = _SLICE.format(
    request="g = tape.gradient(loss, [tf.gather(x, [0, 2])])  # expect: GC108"
)
VALID["gc108-slice-of-the-gradient"] = _SLICE.format(request="g = tape.gradient(loss, x)[:, 0]")
VALID["gc108-one-variable-of-the-list"] = _SLICE.format(request="g = tape.gradient(loss, model.trainable_variables[0])")

_HESSIAN = """\
import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(4, activation="tanh")])
x = tf.random.normal((8, 3))
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = model(x)
{first}
hessian = tape.batch_jacobian(jacobian, x)
"""
INVALID["gc109-first-derivative-after-the-tape"] = _HESSIAN.format(
    first="jacobian = tape.batch_jacobian(y, x)  # expect: GC109"
)
VALID["gc109-first-derivative-on-the-tape"] = _HESSIAN.format(first="    jacobian = tape.batch_jacobian(y, x)")
VALID["gc109-first-derivative-inside-an-outer-tape"] = """\
import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
x = tf.random.normal((8, 3))
with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = model(x)
    dy_dx = inner.gradient(y, x)
    penalty = tf.reduce_mean(tf.square(dy_dx))
grads = outer.gradient(penalty, model.trainable_variables)
"""


# --- an acting pass before the tape, the in-tape path cut elsewhere --------------------------

_ROLLOUT = """\
import tensorflow as tf
import keras

policy = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
opt = keras.optimizers.Adam()
obs = tf.random.normal((32, 4))
returns = tf.random.normal((32,))

for it in range(10):
    logits = policy(obs){mark109}
    actions = tf.random.categorical(logits, 1)[:, 0]
    with tf.GradientTape() as tape:
        log_probs = {log_probs}
        logp = tf.reduce_sum(tf.one_hot(actions, 2) * log_probs, axis=1)
        loss = -tf.reduce_mean(logp * returns)
    grads = tape.gradient(loss, policy.trainable_variables)
    opt.apply_gradients(zip(grads, policy.trainable_variables))
"""
INVALID["gc104-in-tape-cut-not-the-rollout"] = _ROLLOUT.format(
    mark109="", log_probs="tf.nn.log_softmax(tf.stop_gradient(policy(obs)))  # expect: GC104"
)
INVALID["gc109-the-rollout-is-the-only-path"] = _ROLLOUT.format(
    mark109="  # expect: GC109", log_probs="tf.nn.log_softmax(logits)"
)
VALID["gc109-rollout-then-the-policy-on-the-tape"] = _ROLLOUT.format(
    mark109="", log_probs="tf.nn.log_softmax(policy(obs))"
)


# --- self.trainable_variables of a model whose sub-model runs before the tape -------------

_BACKBONE = """\
import tensorflow as tf
import keras


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.backbone = keras.Sequential([keras.layers.Dense(8, activation="relu")])
        self.backbone.trainable = {trainable}
        self.head = keras.layers.Dense(2)

    def call(self, x):
        return self.head(self.backbone(x))

    def train_step(self, data):
        x, y = data
        feats = self.backbone(x){mark}
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.head(feats) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
"""
INVALID["gc109-trainable-backbone-before-the-tape"] = _BACKBONE.format(trainable="True", mark="  # expect: GC109")
VALID["gc109-frozen-backbone-before-the-tape"] = _BACKBONE.format(trainable="False", mark="")


# --- GC104 in an endpoint layer's add_loss, reached from a functional model ---------------

_ENDPOINT = """\
import numpy as np
import tensorflow as tf
import keras


class Endpoint(keras.layers.Layer):
    def call(self, logits, targets):
        loss = keras.losses.sparse_categorical_crossentropy(targets, {logits}, from_logits=True){mark}
        self.add_loss(tf.reduce_mean(loss))
        return tf.nn.softmax(logits)


inputs = keras.Input((4,))
targets = keras.Input((), dtype="int32")
logits = keras.layers.Dense(3)(keras.layers.Dense(8)(inputs))
model = keras.Model([inputs, targets], Endpoint()(logits, targets))
model.compile(optimizer="adam")
model.fit([np.zeros((8, 4)), np.zeros((8,))], epochs=1)
"""
INVALID["gc104-stop-gradient-in-an-endpoint-layer"] = _ENDPOINT.format(
    logits="tf.stop_gradient(logits)", mark="  # expect: GC104"
)
VALID["gc104-endpoint-layer-loss"] = _ENDPOINT.format(logits="logits", mark="")
VALID["gc104-stop-gradient-in-a-regularizer-next-to-the-loss"] = """\
import numpy as np
import tensorflow as tf
import keras


class Regularize(keras.layers.Layer):
    def call(self, h):
        self.add_loss(1e-3 * tf.reduce_mean(tf.square(tf.stop_gradient(h))))
        return h


inputs = keras.Input((4,))
outputs = keras.layers.Dense(1)(Regularize()(keras.layers.Dense(8)(inputs)))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1)
"""


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid example must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    findings = check_source(source, "example.py")
    assert not findings, [f"{f.line}: {f.code} {f.message}" for f in findings]


# --- what the findings say ------------------------------------------------------------


def test_a_cut_inside_a_layer_names_the_starved_part_not_the_model():
    """The classifier after the cut gets its gradient: the finding names the block's layer,
    not ``model`` as a whole (nor "the variables of block and model")."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf
        import keras


        class Block(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = keras.layers.Dense(4)

            def call(self, x):
                return tf.stop_gradient(self.dense(x))  # expect: GC104


        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.classifier = keras.layers.Dense(1)

            def call(self, x):
                return self.classifier(self.block(x))


        model = Net()
        x, y = tf.zeros((2, 3)), tf.zeros((2, 1))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        """
    )
    (finding,) = check_source(source, "example.py")
    assert (finding.line, finding.code) == (11, "GC104")
    assert finding.variables == ["model.block.dense"]
    assert "variables of model get" not in finding.message


_CALLED = """\
import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(1)])
opt = keras.optimizers.Adam()

{forward}
def train_step(x, y):
    logits = {call}
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((logits - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


def main():
    for _ in range(3):
        train_step(tf.zeros((2, 3)), tf.zeros((2, 1)))


main()
"""


def test_gc109_in_the_function_that_opens_the_tape_is_reported_once():
    """Seen from ``train_step``'s own run and from its callers' (``main``, the module), the
    forward pass before the tape is one finding, with no "runs in the call at" note: the
    call of ``train_step`` is not what runs before its tape."""
    findings = check_source(_CALLED.format(forward="", call="model(x)"), "example.py")
    assert [(f.line, f.code) for f in findings] == [(9, "GC109")]
    assert not any("runs in the call" in note for note in findings[0].notes)


def test_gc109_in_a_helper_names_the_call_in_the_function_that_opens_the_tape():
    """The statement to move into the block is the call of the helper (line 12), as the
    trace engine names it, not the helper's own line; seen from ``train_step``'s run and
    from ``main``'s, it is one finding."""
    source = _CALLED.format(forward="def forward(x):\n    return model(x)\n\n", call="forward(x)")
    findings = check_source(source, "example.py")
    assert [(f.line, f.code) for f in findings] == [(12, "GC109")]
    assert "the output of model(...) (line 8) reaches the target loss of line 15 only through this call" in (
        findings[0].notes
    )


# --- notebooks ------------------------------------------------------------------------


def _notebook(path: Path, cells: list[tuple[str, str]]) -> str:
    data = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"id": f"c{n}", "cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
            | ({"outputs": [], "execution_count": None} if kind == "code" else {})
            for n, (kind, source) in enumerate(cells)
        ],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


_CELLS = [
    ("markdown", "# A notebook"),
    ("code", "%matplotlib inline\n!pip install -q tensorflow\nimport tensorflow as tf\nimport keras"),
    ("code", "model = keras.Sequential([keras.layers.Dense(1)])\nif True:\n    %time x = tf.zeros((2, 3))"),
    ("code", "%%capture\ny = tf.zeros((2, 1))"),
    (
        "code",
        "with tf.GradientTape() as tape:\n"
        "    pred = model(x)\n"
        "    loss = tf.reduce_mean(tf.cast(pred > 0, tf.float32) - y)\n"
        "grads = tape.gradient(loss, model.trainable_variables)",
    ),
]


def test_notebook_cells_are_joined_and_magics_blanked(tmp_path):
    """Cells are one program in order (``model``, ``x``, ``y`` come from earlier cells),
    IPython lines are neutralised in place (an indented ``%time`` runs its statement), and
    the finding points at its cell (counting the Markdown one) and its line in that cell."""
    path = _notebook(tmp_path / "nb.ipynb", _CELLS)
    result = check_notebook(path)
    assert result.error is None
    assert [(f.path, f.line, f.code) for f in result.findings] == [(f"{path}:cell 5", 3, "GC103")]


def test_gradcheck_static_on_a_notebook(tmp_path):
    from gradcheck.cli import main

    path = _notebook(tmp_path / "nb.ipynb", _CELLS)
    result = CliRunner().invoke(main, ["--static", "--no-color", path])
    assert result.exit_code == 1, result.output
    assert f"{path}:cell 5:3:" in result.output and "GC103" in result.output


@pytest.mark.xfail(reason="notebook.to_python leaves a shell escape's continuation lines (`!wget \\`) as code")
def test_notebook_shell_escape_with_continuation_lines(tmp_path):
    cells = [("code", "!wget -q \\\n    -O /tmp/data.csv https://example.com/data.csv\nimport tensorflow as tf")]
    cells += _CELLS[1:]
    result = check_notebook(_notebook(tmp_path / "nb.ipynb", cells))
    assert result.error is None and [f.code for f in result.findings] == ["GC103"]


# --- Mechanisms of the 4NN/7NN/8NN batch: each an INVALID shape and a correct look-alike ---

SHAPES_INVALID: dict[str, str] = {}
SHAPES_VALID: dict[str, str] = {}

# A ``tf.custom_gradient`` function reads a variable it closes over (``kernel =
# self.kernel``): its result depends on that variable (the gradient function returns its
# gradient through ``variables``), not only on its arguments.
_CUSTOM_LAYER = """\
import keras
import numpy as np
import tensorflow as tf


class CustomMatMul(keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 4), initializer="glorot_uniform")

    def call(self, x):
        kernel = {kernel}

        @tf.custom_gradient
        def matmul(x):
            y = {forward}

            def grad(dy, variables=None):
                return tf.matmul(dy, kernel, transpose_b=True), [tf.matmul(x, dy, transpose_a=True)]

            return y, grad

{body}


model = keras.Sequential([keras.Input((5,)), CustomMatMul(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 5), "float32"), np.zeros((8, 1), "float32"), epochs=1, verbose=0)
"""
SHAPES_VALID["custom-gradient-reads-a-captured-kernel"] = _CUSTOM_LAYER.format(
    kernel="self.kernel", forward="tf.matmul(x, kernel)", body="        return matmul(x)"
)
SHAPES_VALID["custom-gradient-straight-through-on-a-captured-kernel"] = _CUSTOM_LAYER.format(
    kernel="self.kernel", forward="tf.matmul(x, tf.round(kernel))", body="        return matmul(x)"
)
SHAPES_INVALID["custom-gradient-output-dropped"] = _CUSTOM_LAYER.format(
    kernel="self.kernel",
    forward="tf.matmul(x, kernel)",
    body="        y = matmul(x)  # expect: GC108\n        return x[:, :4]",
)
SHAPES_INVALID["custom-gradient-captures-a-stopped-kernel"] = _CUSTOM_LAYER.format(
    kernel="tf.stop_gradient(self.kernel)  # expect: GC104",
    forward="tf.matmul(x, kernel)",
    body="        return matmul(x)",
)

# Sources filtered at run time (``[v for v in model.trainable_variables if ...]``): which
# variables they keep is not known, so a head that one loss does not use may be left out.
_TWO_HEADS = """\
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input((4,))
trunk = keras.layers.Dense(16, activation="relu", name="trunk")(inputs)
policy = keras.layers.Dense(2, activation="softmax", name="policy")(trunk)
value = keras.layers.Dense(1, name="value")(trunk)
model = keras.Model(inputs, [policy, value])
opt = keras.optimizers.Adam(1e-3)
actor_vars = [v for v in model.trainable_variables if not v.path.startswith("value")]
critic_vars = {critic_vars}

state = np.random.rand(1, 4).astype("float32")
with tf.GradientTape(persistent=True) as tape:
    probs, v = model(state)
    advantage = 1.0 - v[0, 0]
    actor_loss = -tf.math.log(probs[0, 1]) * tf.stop_gradient(advantage)
    critic_loss = tf.square(advantage)
actor_grads = tape.gradient(actor_loss, actor_vars)
critic_grads = tape.gradient(critic_loss, critic_vars){mark}
opt.apply_gradients(zip(actor_grads + critic_grads, actor_vars + critic_vars))
"""
SHAPES_VALID["filtered-sources-per-head"] = _TWO_HEADS.format(
    critic_vars='[v for v in model.trainable_variables if not v.path.startswith("policy")]', mark=""
)
SHAPES_VALID["filtered-sources-with-filter"] = _TWO_HEADS.format(
    critic_vars='list(filter(lambda v: not v.path.startswith("policy"), model.trainable_variables))', mark=""
)
SHAPES_VALID["filtered-sources-by-slices"] = _TWO_HEADS.format(
    critic_vars="model.trainable_variables[:2] + model.trainable_variables[4:]", mark=""
)
SHAPES_VALID["filtered-sources-appended-under-an-if"] = _TWO_HEADS.format(
    critic_vars='[]\nfor w in model.trainable_variables:\n    if not w.path.startswith("policy"):\n'
    "        critic_vars.append(w)",
    mark="",
)
SHAPES_INVALID["sources-appended-without-a-filter"] = _TWO_HEADS.format(
    critic_vars="[]\nfor w in model.trainable_variables:\n    critic_vars.append(w)", mark="  # expect: GC108"
)
SHAPES_INVALID["unfiltered-sources-for-the-critic"] = _TWO_HEADS.format(
    critic_vars="model.trainable_variables", mark="  # expect: GC108"
)
SHAPES_INVALID["filtered-sources-of-a-model-the-loss-never-calls"] = """\
import keras
import tensorflow as tf

actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = tf.zeros((2, 4))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(actor(x))
sources = [v for v in critic.trainable_variables if "bias" not in v.name]  # expect: GC108
grads = tape.gradient(loss, sources)
"""
SHAPES_INVALID["filtered-sources-every-path-cut"] = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = tf.zeros((2, 4))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.cast(tf.argmax(model(x), axis=-1), tf.float32))  # expect: GC101
sources = [v for v in model.trainable_variables if v.trainable]
grads = tape.gradient(loss, sources)
"""

# A target computed by a function of the file in the gradient request, after the tape:
# the argument of the request is what to move into the block (not the function's line).
_SALIENCY = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
inputs = tf.zeros((4, 6))


def score(x):
    return tf.reduce_sum(model(x))


with tf.GradientTape() as t:
    t.watch(inputs)
{body}
"""
SHAPES_INVALID["target-computed-by-a-helper-in-the-request"] = _SALIENCY.format(
    body="saliency = t.gradient(score(inputs), inputs)  # expect: GC109"
)
SHAPES_VALID["target-computed-by-a-helper-in-the-tape"] = _SALIENCY.format(
    body="    s = score(inputs)\nsaliency = t.gradient(s, inputs)"
)

# A layer's output bound to a name never read (a dead store): GC108 points at that dead
# end, not at ``fit`` or the request.
_ENCODER = """\
import keras
import numpy as np
from keras import layers


class Tagger(keras.Model):
    def __init__(self):
        super().__init__()
        self.embedding = layers.Embedding(40, 16)
        self.encoder = layers.Dense(16, activation="relu")
        self.classifier = layers.Dense(5)

    def call(self, tokens):
        emb = self.embedding(tokens)
        enc = self.encoder(emb){mark}
        return self.classifier({fed})


model = Tagger()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(np.zeros((8, 9), "int32"), np.zeros((8, 9), "int32"), epochs=1, verbose=0)
"""
SHAPES_INVALID["encoder-output-dropped-in-call"] = _ENCODER.format(mark="  # expect: GC108", fed="emb")
SHAPES_VALID["encoder-output-fed-on"] = _ENCODER.format(mark="", fed="enc")
SHAPES_INVALID["aux-head-output-dropped-in-tape"] = """\
import keras
import tensorflow as tf

backbone = keras.layers.Dense(8, name="backbone")
head = keras.layers.Dense(1, name="head")
aux = keras.layers.Dense(1, name="aux")
x = tf.zeros((2, 4))
with tf.GradientTape() as tape:
    h = backbone(x)
    aux_out = aux(h)  # expect: GC108
    loss = tf.reduce_mean(head(h))
variables = backbone.trainable_variables + head.trainable_variables + aux.trainable_variables
grads = tape.gradient(loss, variables)
"""

# ``tf.compat.v1.scatter_nd_add(variable, ...)`` (and the ``scatter_*`` methods of a
# variable) write into it: what is read back has no gradient to what was written (GC113).
_SCATTER = """\
import keras
import tensorflow as tf

message_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4)])
readout = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
aggregate = tf.Variable(tf.zeros((5, 4)), trainable=False)
feats = tf.zeros((12, 4))
receivers = tf.zeros((12, 1), tf.int32)
with tf.GradientTape() as tape:
    messages = message_net(feats)
{scatter}
    loss = tf.reduce_mean(readout({read}))
variables = message_net.trainable_variables + readout.trainable_variables
grads = tape.gradient(loss, variables)
"""
SHAPES_INVALID["compat-v1-scatter-nd-add-into-a-variable"] = _SCATTER.format(
    scatter="    tf.compat.v1.scatter_nd_add(aggregate, receivers, messages)  # expect: GC113",
    read="aggregate.read_value()",
)
SHAPES_INVALID["variable-scatter-nd-add-method"] = _SCATTER.format(
    scatter="    aggregate.scatter_nd_add(receivers, messages)  # expect: GC113", read="aggregate"
)
SHAPES_VALID["tensor-scatter-nd-add-on-a-tensor"] = _SCATTER.format(
    scatter="    summed = tf.tensor_scatter_nd_add(tf.zeros((5, 4)), receivers, messages)", read="summed"
)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in SHAPES_INVALID.items()])
def test_batch_mechanism_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid example must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in SHAPES_VALID.items()])
def test_batch_mechanism_valid_look_alike_is_silent(source):
    findings = check_source(source, "example.py")
    assert not findings, [f"{f.line}: {f.code} {f.message}" for f in findings]
