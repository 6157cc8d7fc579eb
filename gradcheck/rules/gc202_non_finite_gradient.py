"""GC202 non-finite-gradient: NaN or Inf in a gradient while the loss is finite."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NonFiniteGradient(Rule):
    code = "GC202"
    trace_check = "gradcheck.trace.values.degenerate:check"
    name = "non-finite-gradient"
    severity = "error"
    summary = "A variable's gradient contains NaN or Inf while the loss is finite."
    message = "{reason}: the gradient of {variables} is {kind} while the loss is finite"
    what = """
Finds variables whose gradient contains NaN or Inf on the first checked step while the loss
itself is finite, and names the first op of the backward pass that produced the non-finite
value: walking back from the loss, the op whose output gradient is finite while its input's
is not. That op's own gradient made it (when one value feeds several ops, each op's own
gradient is evaluated to tell which), and the finding points at the user's line that built
it in the forward pass.

Typical causes: `tf.norm`/`tf.sqrt` at exactly 0 (a triplet or contrastive loss with two
identical embeddings), `log` of 0, a division by 0, an `exp` that overflows, `acos` at ±1,
and above all a `tf.where` that guards such a value in the forward pass: `tf.where` sends a
zero gradient into the branch it did not take, and 0 × inf is NaN.

Not reported: the gradients of a loss scaled by a `LossScaleOptimizer` (mixed precision with
dynamic loss scaling, `optimizer.scale_loss(loss)` or `fit` under a `mixed_float16`
policy). An infinite *scaled* gradient on the first steps is how dynamic loss scaling works:
the optimizer finds it, skips that step and lowers the scale. In eager mode the gradients
of the unscaled loss are judged instead (a NaN that does not come from the scale is still
reported); in a traced step the scaled step is left to the optimizer.
"""
    why = """
The loss looks fine, so nothing warns; the optimizer applies NaN and every weight the NaN
reaches becomes NaN at once. The next step's loss is NaN, and the cause (one zero distance
in one batch) is far from the symptom. `tf.debugging.enable_check_numerics` stops at the
first NaN *value*, but a NaN *gradient* of a finite forward pass only appears in the
backward ops TensorFlow generated, with no line of yours on them.
"""
    example = """
with tf.GradientTape() as tape:
    anchor, positive = model(a), model(p)
    distance = tf.norm(anchor - positive, axis=1)  # 0 when a == p: d/dx sqrt(0) = inf
    loss = tf.reduce_mean(tf.maximum(distance - margin, 0.0))
"""
    use_instead = """
with tf.GradientTape() as tape:
    anchor, positive = model(a), model(p)
    distance = tf.sqrt(tf.reduce_sum(tf.square(anchor - positive), axis=1) + 1e-12)
    loss = tf.reduce_mean(tf.maximum(distance - margin, 0.0))
"""
    fix = (
        "Keep the backward pass finite where the forward pass is: guard the op's input (not its output) so its "
        "derivative is finite at every value it can see."
    )
    fix_variants = {
        "sqrt": (
            "A square root at 0",
            "Put a small epsilon inside the square root: `tf.sqrt(x + 1e-12)` (or `tf.sqrt(tf.maximum(x, 1e-12))`); "
            "its derivative `0.5 / sqrt(x)` is infinite at 0.",
        ),
        "norm": (
            "A norm (distance) of a zero vector",
            "Compute the norm with an epsilon inside the square root: "
            "`tf.sqrt(tf.reduce_sum(tf.square(d), axis=-1) + 1e-12)`; or use the squared distance, or "
            "`tf.math.l2_normalize`, which is safe at 0.",
        ),
        "log": (
            "A log at 0",
            "Keep the log's input away from 0: `tf.math.log(x + 1e-7)` or `tf.math.log(tf.maximum(x, 1e-7))`; "
            "for `y * log(p)` use `tf.math.xlogy(y, p)`, and for log-probabilities work from logits "
            "(`tf.nn.log_softmax`, `from_logits=True` losses).",
        ),
        "div": (
            "A division by zero",
            "Use `tf.math.divide_no_nan(a, b)` (0 where b is 0), or add an epsilon to the denominator "
            "(`a / (b + 1e-7)`).",
        ),
        "pow": (
            "A power at a zero base",
            "Keep the base positive (`tf.pow(tf.maximum(x, 1e-7), p)`), or use `tf.square`/`tf.sqrt` with an "
            "epsilon for the common exponents.",
        ),
        "exp": (
            "An exp that overflows",
            "Do not compute `exp` of large values: clip its argument (`tf.exp(tf.minimum(x, 80.0))`), or use the "
            "stable form (`tf.nn.softplus`, `tf.reduce_logsumexp`, `tf.math.log1p(tf.exp(-abs(x)))`).",
        ),
        "acos": (
            "An acos/asin at ±1",
            "Clip the argument strictly inside (-1, 1): `tf.acos(tf.clip_by_value(c, -1 + 1e-7, 1 - 1e-7))`.",
        ),
        "atan2": (
            "An atan2 at (0, 0)",
            "Keep the point away from the origin (add an epsilon to one argument), or guard it with a double "
            "`tf.where`.",
        ),
        "where": (
            "A value that tf.where discards in the forward pass",
            "Use the double-`tf.where` trick: make the dangerous op's *input* safe where it will be discarded, "
            "then select: `safe = tf.where(ok, x, tf.ones_like(x)); y = tf.where(ok, tf.math.log(safe), 0.0)`. "
            "A `tf.where` after the op guards only the forward pass: its zero gradient times the op's infinite "
            "derivative is NaN. For a division, `tf.math.divide_no_nan` does this for you.",
        ),
        "inf-factor": (
            "An infinite or NaN forward value multiplied by a zero gradient",
            "Do not let inf or NaN exist in the forward pass at all, even where it is masked: make the op that "
            "produces it safe (an epsilon, `tf.math.xlogy`, `tf.math.divide_no_nan`, a double `tf.where`).",
        ),
    }
    references = (
        "https://github.com/tensorflow/tensorflow/issues/12071",
        "https://github.com/tensorflow/tensorflow/issues/38349",
        "https://www.tensorflow.org/api_docs/python/tf/where",
        "https://www.tensorflow.org/api_docs/python/tf/math/divide_no_nan",
    )
    call_names = {
        "Sqrt": ("sqrt", "norm", "euclidean_norm"),
        "Rsqrt": ("rsqrt",),
        "Log": ("log",),
        "Log1p": ("log1p",),
        "RealDiv": ("divide", "truediv", "div"),
        "Reciprocal": ("reciprocal",),
        "Pow": ("pow",),
        "Exp": ("exp",),
        "Acos": ("acos",),
        "Asin": ("asin",),
        "Atan2": ("atan2",),
    }

    invalid = (
        Example(
            "triplet-style distance with tf.norm between identical embeddings (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

encoder = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
anchors = np.random.rand(8, 6).astype("float32")
positives = anchors.copy()  # identical pairs: distance exactly 0
negatives = np.random.rand(8, 6).astype("float32")
with tf.GradientTape() as tape:
    a, p, n = encoder(anchors), encoder(positives), encoder(negatives)
    d_pos = tf.norm(a - p, axis=1)  # expect: GC202
    d_neg = tf.norm(a - n, axis=1)
    loss = tf.reduce_mean(tf.maximum(d_pos - d_neg + 1.0, 0.0))
grads = tape.gradient(loss, encoder.trainable_variables)
""",
        ),
        Example(
            "a log guarded by tf.where only in the forward pass (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu")])


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        h = net(x)
        safe_log = tf.where(h > 0.0, tf.math.log(h), tf.zeros_like(h))  # expect: GC202
        loss = tf.reduce_mean(safe_log)
    return tape.gradient(loss, net.trainable_variables)


train_step(np.random.randn(16, 3).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "mixed precision with dynamic loss scaling: the first scaled gradients overflow (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3), initial_scale=2.0**30)
x = (100 * np.random.randn(64, 16)).astype("float32")
y = (100 * np.random.randn(64, 1)).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
    scaled = optimizer.scale_loss(loss)
grads = tape.gradient(scaled, model.trainable_variables)
optimizer.apply(grads, model.trainable_variables)
keras.mixed_precision.set_global_policy("float32")
""",
        ),
        Example(
            "the distance with an epsilon inside the square root (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

encoder = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
anchors = np.random.rand(8, 6).astype("float32")
positives = anchors.copy()
negatives = np.random.rand(8, 6).astype("float32")


def distance(u, v):
    return tf.sqrt(tf.reduce_sum(tf.square(u - v), axis=1) + 1e-12)


with tf.GradientTape() as tape:
    a, p, n = encoder(anchors), encoder(positives), encoder(negatives)
    loss = tf.reduce_mean(tf.maximum(distance(a, p) - distance(a, n) + 1.0, 0.0))
grads = tape.gradient(loss, encoder.trainable_variables)
""",
        ),
        Example(
            "the double tf.where: the log's input is made safe first (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu")])


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        h = net(x)
        safe_h = tf.where(h > 0.0, h, tf.ones_like(h))
        safe_log = tf.where(h > 0.0, tf.math.log(safe_h), tf.zeros_like(h))
        loss = tf.reduce_mean(safe_log)
    return tape.gradient(loss, net.trainable_variables)


train_step(np.random.randn(16, 3).astype("float32"))
""",
        ),
    )
