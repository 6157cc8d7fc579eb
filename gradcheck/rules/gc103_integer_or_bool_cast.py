"""GC103 integer-or-bool-cast: casts to int/bool, comparisons, logical ops."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class IntegerOrBoolCast(Rule):
    code = "GC103"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "integer-or-bool-cast"
    summary = "A float on the path to the loss is cast to an integer or bool, or compared: no gradient flows back."
    message = "{call} turns a float into an integer or bool, which carries no gradient: {variables} {get} none"
    what = """
Finds a path from the trained variables to the loss where a float tensor becomes an
integer or a bool: `tf.cast(x, tf.int32)`, `tf.cast(x, tf.bool)`, comparisons
(`tf.equal`, `>`, `tf.less`...), `tf.math.is_nan`, logical ops.
"""
    why = """
Integer and bool tensors carry no gradient in TensorFlow. Casting back to float afterwards
does not help: the cast to int already threw the derivative away (a truncation is a step
function). Every variable upstream of the cast gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    score = w * features / cutoff
    decision = tf.cast(tf.cast(score, tf.int32), tf.float32)
    loss = tf.reduce_mean(tf.square(labels - decision))
"""
    use_instead = """
with tf.GradientTape() as tape:
    score = w * features / cutoff
    decision = tf.sigmoid(10.0 * (score - 1.0))  # a smooth step
    loss = tf.reduce_mean(tf.square(labels - decision))
"""
    fix = (
        "Keep the value in floating point on the way to the loss: replace the hard threshold by a "
        "smooth step such as `tf.sigmoid(k * ({arg} - threshold))`, and cast to integer or bool only "
        "for decisions and metrics, outside the loss. To keep hard 0/1 values in the forward pass, "
        "use a straight-through estimator: "
        "`{arg} + tf.stop_gradient(tf.cast({arg} > threshold, {arg}.dtype) - {arg})`."
    )
    fix_variants = {
        "indices": (
            "When a computed float is used as integer indices (fed to an `Embedding` or a gather)",
            "A float fed to `{call}` is cast to integer ids, and ids carry no gradient. Keep it "
            "continuous: for a learned position (a shift, an offset, a coordinate), interpolate between "
            "the neighbouring entries (`lower = tf.floor(p)`, `frac = p - lower`, then `(1 - frac) * "
            "tf.gather(table, lower) + frac * tf.gather(table, lower + 1)`), so the position gets a gradient "
            "through `frac`; for a location in an image (a glimpse, a crop), sample it with a differentiable "
            "op (`tf.image.crop_and_resize` with float boxes, bilinear sampling), or train a hard choice with a "
            "score-function estimator (REINFORCE); for a choice of an entry, multiply a (soft) one-hot or "
            "probability vector by the table (`tf.matmul(probs, embedding.embeddings)`) instead of looking ids "
            "up, or feed the float to a `Dense` layer.",
        ),
        "coordinates": (
            "When a comparison only decides which entries to use (`tf.where(adj > t)` as the edges of a graph, "
            "a mask turned into indices)",
            "The coordinates where a condition holds carry no gradient, and neither does what is gathered "
            "or summed with them. Use the values the condition is about, not only where it holds: gather "
            "them along the selected entries (`weights = tf.gather_nd(adj, edges)`) and let them weight what "
            "is gathered or aggregated (the messages, the attention logits), or use a soft mask "
            "(`tf.sigmoid((adj - t) / temperature)`) instead of a hard one.",
        ),
    }
    references = ("https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none",)
    op_types = frozenset(
        {
            "Cast",
            "Equal",
            "NotEqual",
            "Less",
            "LessEqual",
            "Greater",
            "GreaterEqual",
            "LogicalAnd",
            "LogicalOr",
            "LogicalNot",
            "IsNan",
            "IsInf",
            "IsFinite",
            "ApproximateEqual",
            "Bitcast",
        }
    )
    call_names = {
        "Cast": ("cast", "to_int32", "to_int64"),
        "Equal": ("equal",),
        "NotEqual": ("not_equal",),
        "Less": ("less",),
        "LessEqual": ("less_equal",),
        "Greater": ("greater",),
        "GreaterEqual": ("greater_equal",),
        "IsNan": ("is_nan",),
        "IsFinite": ("is_finite",),
    }

    invalid = (
        Example(
            "a score truncated to int with a cast (eager, raw variables)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

weight = tf.Variable(2.0, name="weight")
threshold = tf.Variable(1.5, name="threshold")
features = np.random.rand(64).astype("float32")
labels = (features > 0.5).astype("float32")
with tf.GradientTape() as tape:
    score = weight * features / threshold
    decision = tf.cast(tf.cast(score, tf.int32), tf.float32)  # expect: GC103
    loss = tf.reduce_mean(tf.square(labels - decision))
grads = tape.gradient(loss, [weight, threshold])
""",
        ),
        Example(
            "a comparison turned into the training target (model.fit custom loss)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


def thresholded_mse(y_true, y_pred):
    hard = tf.cast(y_pred > 0.5, tf.float32)  # expect: GC103
    return tf.reduce_mean(tf.square(y_true - hard))


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="sgd", loss=thresholded_mse)
model.fit(np.random.rand(32, 3).astype("float32"), np.random.randint(0, 2, (32, 1)).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
    valid = (
        Example(
            "a smooth step instead of the truncation (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

weight = tf.Variable(2.0, name="weight")
threshold = tf.Variable(1.5, name="threshold")
features = np.random.rand(64).astype("float32")
labels = (features > 0.5).astype("float32")
with tf.GradientTape() as tape:
    score = weight * features / threshold
    decision = tf.sigmoid(10.0 * (score - 1.0))
    loss = tf.reduce_mean(tf.square(labels - decision))
grads = tape.gradient(loss, [weight, threshold])
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "casts between float types and a boolean mask on the labels (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


def masked_mse(y_true, y_pred):
    valid = tf.cast(y_true >= 0.0, tf.float32)  # a mask from the labels, not from the model
    error = tf.cast(y_pred, tf.float64) - tf.cast(y_true, tf.float64)
    return tf.reduce_mean(valid * tf.cast(tf.square(error), tf.float32))


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss=masked_mse)
model.fit(np.random.rand(32, 3).astype("float32"), np.random.rand(32, 1).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
