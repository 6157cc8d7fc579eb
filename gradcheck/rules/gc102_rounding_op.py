"""GC102 rounding-op: round, floor, ceil, rint."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class RoundingOp(Rule):
    code = "GC102"
    name = "rounding-op"
    summary = "The loss goes through a rounding op (round, floor, ceil, rint), which has no gradient."
    message = "{call} rounds to a step function, which has no gradient: {variables} get none"
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
        "through in the backward pass: `{arg} + tf.stop_gradient(tf.round({arg}) - {arg})`; or optimise a "
        "smooth surrogate (cross-entropy, a steep sigmoid) and keep rounding for metrics."
    )
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
