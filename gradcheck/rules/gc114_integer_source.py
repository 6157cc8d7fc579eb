"""GC114 integer-source: the variable or tensor asked for has an integer dtype."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class IntegerSource(Rule):
    code = "GC114"
    name = "integer-source"
    summary = "A source of `tape.gradient` has an integer (or bool) dtype: no gradient exists for it."
    message = "{variables} has dtype {dtype}: gradients exist only for floating-point values"
    what = """
Finds variables or tensors of an integer or bool dtype among the sources of
`tape.gradient`: an integer weight (`add_weight(..., dtype="int32")`), an index tensor.
The finding points where the variable was created.
"""
    why = """
TensorFlow differentiates only floating-point (and complex) values. An integer variable
always gets `None`, whatever the loss; with `model.fit`, Keras then says no gradients
exist.
"""
    example = """
class Scale(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(1,), initializer="ones", dtype="int32")
"""
    use_instead = """
class Scale(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(1,), initializer="ones", dtype="float32")
    def call(self, x):
        return x * tf.round(self.scale)  # round in the forward pass if you need integers
"""
    fix = (
        "Make the variable floating point (`dtype='float32'`); round or cast it inside the forward "
        "pass if integer values are needed (with a straight-through estimator to keep a gradient)."
    )
    references = ("https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",)
