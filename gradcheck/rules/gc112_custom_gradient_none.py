"""GC112 custom-gradient-none: a tf.custom_gradient returns None for an input."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class CustomGradientNone(Rule):
    code = "GC112"
    name = "custom-gradient-none"
    summary = "A `tf.custom_gradient` function's gradient returns None for an input the variables flow through."
    message = "the tf.custom_gradient {call} returns None for an input: {variables} upstream get no gradient"
    what = """
Finds a `@tf.custom_gradient` function on the path whose `grad` function returns `None`
for the input that carries the trained variables.
"""
    why = """
A custom gradient replaces TensorFlow's own: whatever `grad` returns is all that flows
back. `None` for an input means "no gradient", so everything upstream of that input is
starved. It is easy to do by accident when a `grad` returns fewer values than the function
has inputs, or returns `None` for an input thought constant.
"""
    example = """
@tf.custom_gradient
def clip_grad(x, scale):
    def grad(upstream):
        return None, tf.reduce_sum(upstream * x)
    return x * scale, grad
"""
    use_instead = """
@tf.custom_gradient
def clip_grad(x, scale):
    def grad(upstream):
        return tf.clip_by_norm(upstream * scale, 1.0), tf.reduce_sum(upstream * x)
    return x * scale, grad
"""
    fix = (
        "Return a gradient tensor (not None) from the custom gradient's `grad` for every input "
        "through which trained variables flow."
    )
    references = ("https://www.tensorflow.org/api_docs/python/tf/custom_gradient",)
