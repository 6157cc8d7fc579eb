"""GC114 integer-source: the variable or tensor asked for has an integer dtype."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class IntegerSource(Rule):
    code = "GC114"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "integer-source"
    summary = "A source of `tape.gradient` has an integer (or bool) dtype: no gradient exists for it."
    message = "{variables} {has} dtype {dtype}: gradients exist only for floating-point values"
    what = """
Finds variables or tensors of an integer or bool dtype among the sources of
`tape.gradient`: an integer weight (`add_weight(..., dtype="int32")`), an index tensor.
The finding points where the variable was created; for a tensor made an integer by a
cast of a float (`x = tf.cast(x, tf.int32)` before `tape.watch(x)`), at that cast; for
other integer tensors (token ids, an uint8 image), at the user's call that feeds it to
the computation (the model call, the embedding).
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
        "If the variable is state, not a weight (a counter, a step, an index), create it with "
        "`trainable=False` so it is not among the variables you differentiate; if it is a learned "
        "weight, make it floating point (`dtype='float32'`) and round or cast it inside the forward "
        "pass if integer values are needed (with a straight-through estimator to keep a gradient)."
    )
    fix_variants = {
        "tensor": (
            "When the source is an integer input tensor (an uint8 image, integer features)",
            "Cast it to floating point before watching it and feed the float tensor to the model: "
            "`{names} = tf.cast({names}, tf.float32)` (scale it as the model expects), then "
            "`tape.watch({names})`; the gradient exists for the float copy.",
        ),
        "indices": (
            "When the source is integer *indices* (token ids fed to an embedding or a gather)",
            "Ids are positions, not quantities: no gradient exists for them. Attribute in embedding "
            "space instead: compute the embedded vectors (e.g. `embedded = embedding_layer({names})`), "
            "`tape.watch(embedded)`, run the rest of the model on `embedded` and take the gradient with "
            "respect to it (sum over the embedding axis for a per-token score, as integrated gradients "
            "on text do).",
        ),
    }
    references = ("https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",)

    invalid = (
        Example(
            "an int32 weight in a Keras 3 custom layer (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class IntScale(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(1,), initializer="ones", dtype="int32", name="scale")  # expect: GC114

    def call(self, x):
        return x * tf.cast(self.scale, x.dtype)


model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2), IntScale()])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(16, 2).astype("float32"), np.random.rand(16, 2).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "gradients asked for integer token ids (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

embed = keras.layers.Embedding(10, 4)
tokens = tf.constant(np.random.randint(0, 10, (2, 5)))
with tf.GradientTape() as tape:
    tape.watch(tokens)
    loss = tf.reduce_sum(embed(tokens))  # expect: GC114
grads = tape.gradient(loss, [tokens] + embed.trainable_variables)
""",
        ),
    )
    valid = (
        Example(
            "a float weight rounded in the forward pass with a straight-through estimator (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class RoundedScale(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(1,), initializer="ones", name="scale")

    def call(self, x):
        rounded = self.scale + tf.stop_gradient(tf.round(self.scale) - self.scale)
        return x * rounded


model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2), RoundedScale()])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(16, 2).astype("float32"), np.random.rand(16, 2).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "integer token ids as input, gradients only for the embedding (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

embed = keras.layers.Embedding(10, 4)
tokens = tf.constant(np.random.randint(0, 10, (2, 5)))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(embed(tokens))
grads = tape.gradient(loss, embed.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
    )
