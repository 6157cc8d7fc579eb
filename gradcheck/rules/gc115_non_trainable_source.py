"""GC115 non-trainable-source: gradients asked for non-trainable variables."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class NonTrainableSource(Rule):
    code = "GC115"
    name = "non-trainable-source"
    summary = "Gradients are asked for non-trainable variables (e.g. `model.variables` includes BatchNormalization statistics)."
    message = "{variables} not trainable: the tape does not watch non-trainable variables, so the gradient is None"
    what = """
Finds non-trainable variables among the sources of `tape.gradient`, typically because the
step asks for `model.variables` or `model.weights` instead of `model.trainable_variables`
(BatchNormalization's moving mean and variance, frozen layers, counters).
"""
    why = """
A tape watches only trainable variables; non-trainable state such as BatchNormalization
moving statistics is updated outside backpropagation. Their gradients are `None`, and an
optimizer given the list fails or silently skips them.
"""
    example = """
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
grads = tape.gradient(loss, model.variables)
"""
    use_instead = """
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
grads = tape.gradient(loss, model.trainable_variables)
"""
    fix = (
        "Ask for gradients of `model.trainable_variables` (not `model.variables` / `model.weights`); "
        "non-trainable state such as BatchNormalization moving statistics is updated outside backprop."
    )
    references = ("https://keras.io/api/layers/normalization_layers/batch_normalization/",)
