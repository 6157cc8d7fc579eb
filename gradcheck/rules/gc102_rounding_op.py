"""GC102 rounding-op: round, floor, ceil, rint."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class RoundingOp(Rule):
    code = "GC102"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "rounding-op"
    summary = "The loss goes through a rounding op (round, floor, ceil, rint), which has no gradient."
    message = "{call} rounds to a step function, which has no gradient: {variables} {get} none"
    what = """
Finds a path from the trained variables to the loss that goes through `tf.round`,
`tf.math.floor`, `tf.math.ceil`, `tf.math.rint` or an integer division (`//`).
"""
    why = """
Rounding is a staircase: flat everywhere except at the jumps, so its derivative is zero or
undefined. TensorFlow registers `None` as the gradient of these ops, and every variable
upstream of the rounding gets no gradient. Losses that "count" hits (`round` the
probabilities, compare with the labels, count) are the usual way in.
"""
    example = """
with tf.GradientTape() as tape:
    probs = model(x, training=True)
    hits = tf.cast(tf.equal(tf.round(probs), y), tf.float32)
    loss = 1.0 - tf.reduce_mean(hits)
"""
    use_instead = """
with tf.GradientTape() as tape:
    probs = model(x, training=True)
    # straight-through estimator: rounds forward, passes the gradient through backward
    hard = probs + tf.stop_gradient(tf.round(probs) - probs)
    loss = tf.reduce_mean(tf.abs(y - hard))
    # or train a smooth surrogate: keras.losses.binary_crossentropy(y, probs)
"""
    fix = (
        "Use a straight-through estimator, which rounds in the forward pass and lets the gradient "
        "through in the backward pass: `{arg} + tf.stop_gradient(tf.math.{fn}({arg}) - {arg})`; or optimise a "
        "smooth surrogate (cross-entropy, a steep sigmoid) and keep rounding for metrics."
    )
    doc_fields = {"arg": "x", "fn": "round"}
    fix_variants = {
        "indices": (
            "When the rounded value is used as indices (a gather at a rounded position: nearest-neighbour "
            "sampling of a learned coordinate)",
            "A rounded position used as indices carries no gradient, and a straight-through estimator "
            "would not help: the gather itself has none with respect to its indices. Interpolate "
            "between the neighbouring entries instead: `lower = tf.floor({arg})`, `frac = {arg} - lower`, "
            "gather at `lower` and `lower + 1` (clipped to the table) and blend them with the weights "
            "`1 - frac` and `frac`; bilinear sampling in 2-D (as a spatial transformer does), so the "
            "position gets a gradient through the fractional weights.",
        ),
    }

    def fix_text(self, **fields) -> str:
        # the rounding the user wrote (``x // y`` floors): the estimator must use the same
        fn = str(fields.get("fn") or "round")
        fields["fn"] = {"floordiv": "floor", "truncatediv": "floor"}.get(fn, fn)
        return super().fix_text(**fields)

    references = (
        "https://www.tensorflow.org/api_docs/python/tf/math/round",
        "https://arxiv.org/abs/1308.3432",
    )
    op_types = frozenset({"Round", "Floor", "Ceil", "Rint", "FloorDiv", "TruncateDiv"})
    call_names = {
        "Round": ("round",),
        "Floor": ("floor",),
        "Ceil": ("ceil",),
        "Rint": ("rint",),
        "FloorDiv": ("floordiv", "floor_div"),
    }

    invalid = (
        Example(
            "custom loss rounds the predictions (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


def hard_error(y_true, y_pred):
    return tf.reduce_mean(tf.abs(y_true - tf.round(y_pred)))  # expect: GC102


model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss=hard_error)
model.fit(np.random.rand(64, 8).astype("float32"), np.random.randint(0, 2, (64, 1)).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "a count predicted with floor (eager custom loop)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

counter = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="softplus")])
optimizer = keras.optimizers.SGD(0.01)
x = np.random.rand(16, 4).astype("float32")
counts = np.random.randint(0, 5, (16, 1)).astype("float32")
with tf.GradientTape() as tape:
    predicted = tf.math.floor(counter(x) * 10.0)  # expect: GC102
    loss = tf.reduce_mean(tf.square(predicted - counts))
grads = tape.gradient(loss, counter.trainable_variables)
optimizer.apply_gradients(zip(grads, counter.trainable_variables))
""",
        ),
    )
    valid = (
        Example(
            "straight-through estimator: rounds forward, gradient passes backward (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1, activation="sigmoid")])
x = np.random.rand(32, 8).astype("float32")
y = np.random.randint(0, 2, (32, 1)).astype("float32")
with tf.GradientTape() as tape:
    probs = model(x)
    hard = probs + tf.stop_gradient(tf.round(probs) - probs)
    loss = tf.reduce_mean(tf.abs(y - hard))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "round only in a metric, smooth loss for training (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


def rounded_accuracy(y_true, y_pred):
    return tf.reduce_mean(tf.cast(tf.equal(y_true, tf.round(y_pred)), tf.float32))


model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[rounded_accuracy])
model.fit(np.random.rand(64, 8).astype("float32"), np.random.randint(0, 2, (64, 1)).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
