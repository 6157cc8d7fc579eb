"""Issue 39 §1 / issue 37: shapes of code the static engine was not built on. Each bug has
a correct look-alike that must stay silent. INVALID sources mark each culprit with
``# expect: GCxxx``; the findings must be exactly those (line, code) pairs."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tests.test_static_engine import expected, found

INVALID: dict[str, str] = {}
VALID: dict[str, str] = {}

# --- packages: a model factory from a module of the same package (issue 37) -------------

_PKG_STEP = """\
import tensorflow as tf

from {imp} import build_model

model = build_model()
opt = tf.keras.optimizers.Adam()
x = tf.random.normal((8, 5))
y = tf.random.uniform((8,), maxval=3, dtype=tf.int32)
with tf.GradientTape() as tape:
    logits = model(x)
    {loss}
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
"""
_GOOD_LOSS = "loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))"
_BAD_LOSS = "loss = tf.reduce_mean(tf.cast(tf.argmax(logits, axis=1), tf.float32))  # expect: GC101"

for _imp in (".model", "..nets.model", "pkg.model"):
    INVALID[f"package-factory-{_imp}"] = _PKG_STEP.format(imp=_imp, loss=_BAD_LOSS)
    VALID[f"package-factory-{_imp}"] = _PKG_STEP.format(imp=_imp, loss=_GOOD_LOSS)

VALID["package-module-relative"] = (
    _PKG_STEP.format(imp=".", loss=_GOOD_LOSS)
    .replace("import build_model", "import model as M")
    .replace("model = build_model()", "model = M.build_model()")
)

# --- models it does not show: passed in, built from arguments, named anyhow ----------------

_PASSED_IN = """\
import numpy as np
import keras
import tensorflow as tf


class Trainer(keras.Model):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            p = self.head(self.encoder(x))
            {loss}
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
"""
INVALID["passed-in-encoder-numpy-in-train-step"] = _PASSED_IN.format(
    loss="loss = tf.reduce_mean(np.square(p - y))  # expect: GC105"
)
VALID["passed-in-encoder-tensor-ops-in-train-step"] = _PASSED_IN.format(loss="loss = tf.reduce_mean(tf.square(p - y))")

_FROM_ARGUMENTS = """\
import numpy as np
import keras
import tensorflow as tf


def train(inputs, outputs, x, y):
    net = keras.Model(inputs, outputs)
    opt = keras.optimizers.Adam()
    with tf.GradientTape() as tape:
        out = net(x)
        {loss}
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
"""
INVALID["functional-model-from-arguments-numpy-in-tape"] = _FROM_ARGUMENTS.format(
    loss="loss = tf.reduce_mean(np.abs(out - y))  # expect: GC105"
)
VALID["functional-model-from-arguments-tensor-ops"] = _FROM_ARGUMENTS.format(
    loss="loss = tf.reduce_mean(tf.abs(out - y))"
)

_ANY_NAME = """\
import numpy as np
import tensorflow as tf


def step(f, opt, x, y):
    with tf.GradientTape() as tape:
        out = f(x)
        {loss}
    grads = tape.gradient(loss, f.trainable_variables)
    opt.apply_gradients(zip(grads, f.trainable_variables))
"""
INVALID["parameter-called-and-asked-for-variables-numpy"] = _ANY_NAME.format(
    loss="loss = tf.reduce_mean(np.abs(out - y))  # expect: GC105"
)
VALID["parameter-called-and-asked-for-variables-tensor-ops"] = _ANY_NAME.format(
    loss="loss = tf.reduce_mean(tf.abs(out - y))"
)
# a function passed in that is no model: nothing asks for its variables
VALID["parameter-function-numpy-postprocess"] = _ANY_NAME.format(
    loss="loss = tf.reduce_mean(tf.abs(out - y))\n        report = np.abs(out)"
).replace("f.trainable_variables", "opt.variables")

# --- a model's outputs unpacked into names (a VAE's encoder passed in) ----------------------

_UNPACKED = """\
import keras
import tensorflow as tf


class VAE(keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    {deco}def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var = self.encoder(data)
            {edit}
            z = z_mean + tf.exp(0.5 * z_log_var) * tf.random.normal(tf.shape(z_mean))
            loss = tf.reduce_mean(tf.square(data - self.decoder(z)))
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return {{"loss": loss}}
"""
for _deco in ("", "@tf.function\n    "):
    _kind = "traced" if _deco else "eager"
    # one output cut: the head behind it starves, the other output still trains the encoder
    INVALID[f"unpacked-output-cut-{_kind}"] = _UNPACKED.format(
        deco=_deco, edit="z_mean = tf.round(z_mean)  # expect: GC102"
    )
    VALID[f"unpacked-outputs-both-used-{_kind}"] = _UNPACKED.format(deco=_deco, edit="pass")
    # a cut output that only acts (an index, a metric) is no cut of the loss
    VALID[f"unpacked-output-argmax-as-metric-{_kind}"] = _UNPACKED.format(
        deco=_deco, edit="self.cluster = tf.argmax(z_mean, axis=-1)"
    )
# a tensor split into halves is one output: cutting one half starves nothing
VALID["split-halves-of-one-output-one-cut"] = _UNPACKED.format(deco="", edit="pass").replace(
    "z_mean, z_log_var = self.encoder(data)",
    "z_mean, z_log_var = tf.split(self.encoder(data), 2, axis=-1)\n            z_mean = tf.stop_gradient(z_mean)",
)

# --- an index computed on the host from the value it picks from (a saliency map) -----------

_SALIENCY = """\
import numpy as np
import keras
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
images = tf.random.normal((1, 8))
with tf.GradientTape() as tape:
    tape.watch(images)
    pred = model(images)
    {edit}
    class_idxs_sorted = np.argsort(pred.numpy().flatten())[::-1]
    loss = pred[0][class_idxs_sorted[0]]
grads = tape.gradient(loss, images)
"""
# the host index is no gradient path: only the real cut is named, not the .numpy() too
INVALID["host-index-beside-a-cut"] = _SALIENCY.format(edit="pred = tf.round(pred)  # expect: GC102")
VALID["host-index-of-the-live-prediction"] = _SALIENCY.format(edit="pass")

# --- a model passed to a Model subclass under any name (a distiller's student) --------------

_DISTILLER = """\
import keras
import tensorflow as tf


class Distiller(keras.Model):
    def __init__(self, student, teacher, distill_loss):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.distill_loss = distill_loss

    @tf.function
    def train_step(self, data):
        x, y = data
        teacher_predictions = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            student_predictions = self.student(x, training=True)
            {edit}
            loss = self.distill_loss(tf.nn.softmax(teacher_predictions), tf.nn.softmax(student_predictions))
        gradients = tape.gradient(loss, self.student.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.student.trainable_variables))
        return {{"loss": loss}}
"""
INVALID["distiller-student-cast"] = _DISTILLER.format(
    edit="student_predictions = tf.cast(tf.cast(student_predictions, tf.int32), tf.float32)  # expect: GC103"
)
# the teacher runs before the tape on purpose; the loss function is called but is no model
VALID["distiller-student-trained"] = _DISTILLER.format(edit="pass")

# --- the tape's own controls -----------------------------------------------------------------

_BLIND_TAPE = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
opt = keras.optimizers.Adam()
x = tf.random.normal((8, 5))
with tf.GradientTape(watch_accessed_variables=False) as tape:{mark}
    {watch}
    loss = tf.reduce_mean(model(x))
grads = tape.gradient(loss, {sources})
"""
INVALID["tape-watches-no-accessed-variable"] = _BLIND_TAPE.format(
    mark="  # expect: GC110", watch="pass", sources="model.trainable_variables"
)
VALID["tape-watches-the-variables-itself"] = _BLIND_TAPE.format(
    mark="", watch="tape.watch(model.trainable_variables)", sources="model.trainable_variables"
)
VALID["tape-watches-only-the-input-it-differentiates"] = _BLIND_TAPE.format(mark="", watch="tape.watch(x)", sources="x")
INVALID["tape-stop-recording-around-the-forward"] = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
x = tf.random.normal((8, 5))
with tf.GradientTape() as tape:
    with tape.stop_recording():
        out = model(x)  # expect: GC109
    loss = tf.reduce_mean(out)
grads = tape.gradient(loss, model.trainable_variables)
"""

_TWO_TAPES = """\
import keras
import tensorflow as tf

model1 = keras.Sequential([keras.layers.Dense(8)])
model2 = keras.Sequential([keras.layers.Dense(3)])
x = tf.random.normal((8, 5))
with tf.GradientTape() as tape1:
    features = model1(x){mark}
with tf.GradientTape() as tape2:
    {watch}
    loss = tf.reduce_mean(model2(features))
upstream = tape2.gradient(loss, features)
grads1 = tape1.gradient(features, model1.trainable_variables, output_gradients=upstream)
"""
INVALID["source-made-on-another-tape"] = _TWO_TAPES.format(mark="  # expect: GC110", watch="pass")
VALID["source-made-on-another-tape-and-watched"] = _TWO_TAPES.format(mark="", watch="tape2.watch(features)")

# --- a write at positions computed from the model (578) ---------------------------------------

_PASTE = """\
import tensorflow as tf
import keras
from keras import layers


class Paste(layers.Layer):
    def call(self, pos):
        canvas = tf.Variable(tf.ones([4, 8, 8, 1]))
        corners = tf.cast(pos * 8, tf.int32){mark}
        canvas[0, corners[0, 0] : corners[0, 1], :, :].assign(tf.zeros([2, 8, 1]))
        return {out}


gen = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
paste = Paste()
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(paste(gen(tf.zeros((4, 3)))))
g = tape.gradient(loss, gen.trainable_variables)
"""
INVALID["write-at-integer-positions-from-the-model"] = _PASTE.format(mark="  # expect: GC103", out="canvas * 1.0")
VALID["write-at-integer-positions-plus-a-soft-path"] = _PASTE.format(mark="", out="canvas * tf.reduce_mean(pos)")


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an INVALID source must mark its culprits"
    assert found(source, "pkg/train.py") == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    assert found(source, "pkg/train.py") == []


def test_static_hook_passes_a_package_module_with_a_relative_import(tmp_path):
    """The pre-commit path: ``gradcheck --static`` on a package's training module exits 0
    (it reported GC109 on ``model = build_model()`` and blocked the commit)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(
        "import tensorflow as tf\n\n\ndef build_model():\n    return tf.keras.Sequential([tf.keras.layers.Dense(3)])\n"
    )
    (pkg / "train.py").write_text(_PKG_STEP.format(imp=".model", loss=_GOOD_LOSS))
    result = run_cli("--static", str(pkg / "train.py"))
    assert result.returncode == 0, result.stdout + result.stderr
