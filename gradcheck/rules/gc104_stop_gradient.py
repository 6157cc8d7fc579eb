"""GC104 stop-gradient: tf.stop_gradient on the only path."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class StopGradient(Rule):
    code = "GC104"
    name = "stop-gradient"
    summary = "`tf.stop_gradient` (or PreventGradient) sits on the only path from the variables to the loss."
    message = "{call} stops the gradient on the only path to the loss: {variables} get none"
    what = """
Finds `tf.stop_gradient` (also inside a `Lambda` layer) on every path from some trained
variables to the loss.
"""
    why = """
`tf.stop_gradient` is meant for one branch that must not backpropagate (a bootstrapped
target, an EMA teacher). Placed on the main path, it silently freezes everything before
it: those variables get `None`, and Keras only warns that gradients do not exist.
"""
    example = """
x = layers.Dense(32, name="feature")(inputs)
x = layers.Lambda(lambda t: tf.stop_gradient(t))(x)
outputs = layers.Dense(2)(x)
"""
    use_instead = """
x = layers.Dense(32, name="feature")(inputs)
outputs = layers.Dense(2)(x)
aux = layers.Dense(1)(layers.Lambda(lambda t: tf.stop_gradient(t))(x))  # only this branch is stopped
"""
    fix = (
        "Remove `tf.stop_gradient` from the path these variables need, or apply it only to the branch "
        "that must not backpropagate (e.g. the bootstrap target); if the layers are meant to be frozen, "
        "set `trainable=False` instead so they are not asked for gradients."
    )
    references = ("https://www.tensorflow.org/api_docs/python/tf/stop_gradient",)
    op_types = frozenset({"StopGradient", "PreventGradient"})
    call_names = {"StopGradient": ("stop_gradient",), "PreventGradient": ("prevent_gradient",)}
