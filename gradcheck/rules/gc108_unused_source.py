"""GC108 unused-source: a variable or watched tensor the loss does not depend on."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class UnusedSource(Rule):
    code = "GC108"
    name = "unused-source"
    summary = "A variable (or watched tensor) asked for gradients is not used in computing the loss at all."
    message = "{variables} never reach the loss: the tape has no path from them to the target"
    what = """
Finds sources of `tape.gradient` with no data-flow path to the target at all: a layer built
but never called, layers not chained in `call()` (each applied to the raw input), a
dropped loss term, an unused head, the wrong model's variables (a GAN generator step asking
for the discriminator's), a watched tensor the model never saw. The finding points at the
`tape.gradient` call and notes where the variable was last read, if it was.
"""
    why = """
A variable the loss does not depend on has no gradient; TensorFlow returns `None`. Keras 3
only warns ("Gradients do not exist for variables ...") and trains the rest, so the unused
part silently stays at its initial values.
"""
    example = """
class Regressor(keras.Model):
    def call(self, inputs):
        h = self.fc1(inputs)
        h = self.fc2(inputs)  # fc1's output is thrown away
        return self.head(h)
"""
    use_instead = """
class Regressor(keras.Model):
    def call(self, inputs):
        h = self.fc1(inputs)
        h = self.fc2(h)
        return self.head(h)
"""
    fix = (
        "Make the loss use {names}: call the layer and chain its output into the model, include the "
        "dropped loss term, or ask for the variables of the model that computed the loss "
        "(`model.trainable_variables`). If they must not train here, leave them out of the sources "
        "or allow them (`--allow-none`)."
    )
    references = ("https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",)
