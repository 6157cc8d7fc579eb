"""GC111 no-gradient-registered: an op with no gradient function."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class NoGradientRegistered(Rule):
    code = "GC111"
    name = "no-gradient-registered"
    summary = "An op on the path has no gradient function (`LookupError`) or is registered as not differentiable."
    message = "{op} has no gradient in TensorFlow: {variables} upstream get none"
    what = """
Finds an op on the path to the loss for which TensorFlow has no gradient function: the
gradient call fails with `LookupError: gradient registry has no entry for: ResizeArea`
(the error names the op type, not your line), or the op is registered as not
differentiable without being one of the better-known causes (GC101-GC107).
"""
    why = """
Without a gradient function, TensorFlow cannot propagate anything through the op: either
the whole gradient call fails, or everything upstream of the op gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    small = tf.image.resize(model(x), [8, 8], method="area")
    loss = tf.reduce_mean(tf.square(small - y))
"""
    use_instead = """
with tf.GradientTape() as tape:
    small = tf.image.resize(model(x), [8, 8], method="bilinear")
    loss = tf.reduce_mean(tf.square(small - y))
"""
    fix = (
        "Use an op that has a gradient (for resizing, `method='bilinear'` or `'nearest'` instead of "
        "`'area'`), register one with `tf.RegisterGradient`, or wrap the computation in a "
        "`tf.custom_gradient`."
    )
    references = ("https://www.tensorflow.org/api_docs/python/tf/RegisterGradient",)
    call_names = {"ResizeArea": ("resize", "resize_area")}
