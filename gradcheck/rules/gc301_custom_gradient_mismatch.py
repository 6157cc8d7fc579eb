"""GC301 custom-gradient-mismatch: a tf.custom_gradient that ignores ``dy`` or disagrees with
finite differences of its own forward function (a cheap comparison by default; the full one
with ``--check-custom-gradients``)."""

from __future__ import annotations

from typing import ClassVar

from gradcheck.rules._base import Example, Rule


class CustomGradientMismatch(Rule):
    code = "GC301"
    trace_check = "gradcheck.trace.values.custom_check:check_call"
    name = "custom-gradient-mismatch"
    severity = "error"
    summary = (
        "A `tf.custom_gradient` ignores its upstream gradient `dy`, or disagrees with central finite "
        "differences of its forward function."
    )
    message = (
        "the custom gradient of `{function}` is wrong for input `{arg}` ({error}): {variables} {get} a wrong gradient"
    )
    what = """
By default, for each `tf.custom_gradient` whose output reaches the loss: calls its gradient
function with three upstream gradients (two independent random ones and the first negated)
and reports an input whose gradient comes out the same, and nonzero, for all three: the
function never multiplies by `dy` (it returns the local derivative alone), so every variable
below it gets the same update whatever the loss says. A gradient that clips, normalises or
takes the sign of `dy`, a gradient reversal (`-dy`), a scaled identity (`0.5 * dy`) and a
layer's custom matmul with a `variables` gradient all depend on `dy` and stay silent; so does
a gradient that is zero everywhere (that is GC201's business). Eager, `tf.function` and `fit`
alike: in a traced function the check runs when the function runs.

Also by default, a cheap comparison with finite differences: for the first call of each
custom gradient defined in the user's code whose output reaches the loss, and each of its
inputs a trained variable's gradient goes through, the directional derivative the gradient
gives, along three random unit directions with random output weights, against central
differences of the forward function on the values of the checked batch (in float64 where the
function accepts it). It reports only a gradient that cannot be deliberate: one that
disagrees (more than 10% over the three directions) differently in different directions,
the derivative of another function (a ReLU whose gradient is the identity's, a missing
term), or has the wrong shape. Silent, as deliberate: a forward function that jumps
(`tf.round`, `tf.sign`) or is flat in every direction (a straight-through estimator); a
forward function that is the identity (its gradient is a gradient transform: clipping,
scaling, reversal, masking); a gradient that is not linear in `dy` (clipped, normalised, the
sign of `dy`: a vector-Jacobian product is linear); and a gradient that is the derivative
times one constant (a scaled gradient). A library's custom gradient (`tf.recompute_grad`,
`tf.nn.silu`) is not compared by default. Its cost, measured in `docs/performance.md`, is a
few evaluations of the custom function per function, not per call.

These comparisons call the user's forward function again; the program's random states stay
out of their reach (Python's and NumPy's generators, TensorFlow's op seeds and the kernels of
seeded random ops, `tf.random.Generator`s, a Keras `SeedGenerator`, and any variable the
re-run writes are put back as they were), so what the program draws after the checked step is
what it draws under `python`. A forward function that draws random numbers (noise, dropout)
is not compared with finite differences at all: two calls of it are two different functions.

The full comparison is opt-in (`gradcheck --check-custom-gradients`,
`check_step(..., check_custom_gradients=True)`): every call of every `tf.custom_gradient`
whose output reaches the loss, library ones included, compared with
`tf.test.compute_gradient` along six random directions with random output weights, and
reported when the directional derivatives, taken together, differ by more than 10%,
whatever the shape of the difference: a missing constant factor (`lambda dy: dy * x` for
`x ** 2`) and a scaled gradient are reported too. The finding points at the gradient
function and names the function, the input and the relative error.

In both, a forward function that jumps (`tf.round`, `tf.sign`: finite differences at two
step sizes disagree) or is flat in every direction while its custom gradient is not (a
straight-through estimator) is a deliberate surrogate: finite differences cannot judge it,
and it is not reported. A gradient of the wrong shape (a per-sample gradient for a
parameter, a scalar for a vector) is reported whatever its values. Under the option, a
gradient reversal layer (`lambda dy: -dy`) is reported too: silence it with `# noqa: GC301`
on its gradient function.
"""
    why = """
A custom gradient is code TensorFlow trusts blindly: a sign error, a missing factor, a
forgotten `dy *` or a wrong axis trains the model along a direction that is not the
gradient. Nothing fails; the loss just does not go down as it should, or goes down for the
wrong reason, and the bug survives every shape check.
"""
    example = """
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return 1 - 1 / (1 + e)  # forgets dy: wrong whenever the upstream gradient is not 1

    return tf.math.log(1 + e), grad
"""
    use_instead = """
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad
"""
    fix = (
        "Derive the gradient of `{function}` again for input `{arg}`: it must return `dy` times the derivative "
        "of the forward result (the vector-Jacobian product), with the input's shape; check it with "
        "`tf.test.compute_gradient`. If the difference is deliberate (a straight-through estimator, a gradient "
        "reversal), mark the gradient function with `# noqa: GC301`."
    )
    fix_variants: ClassVar[dict[str, tuple[str, str]]] = {
        "upstream": (
            "A gradient function that never uses its upstream gradient",
            "Multiply by the upstream gradient: the gradient function of `{function}` must return `dy` times the "
            "local derivative (`return dy * local`), the vector-Jacobian product, not the local derivative alone.",
        ),
    }
    doc_fields = {"function": "log1pexp", "arg": "x"}
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/custom_gradient",
        "https://www.tensorflow.org/api_docs/python/tf/test/compute_gradient",
    )
    #: Options the examples run with (the full comparison, which is opt-in).
    run_options: ClassVar[dict] = {"check_custom_gradients": True}

    invalid = (
        Example(
            "a custom gradient that forgets the upstream gradient dy (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):  # expect: GC301
        return 1 - 1 / (1 + e)

    return tf.math.log(1 + e), grad


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(log1pexp(model(x)) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "a custom gradient whose variable gradients forget dy (`variables=`, eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

weights = tf.Variable([1.0, 1.0], name="poly")


@tf.custom_gradient
def poly(x):
    def grad(dy, variables=None):  # expect: GC301
        return dy * weights[0], [tf.stack([tf.reduce_sum(x), tf.cast(tf.size(x), x.dtype)]) for _ in variables]

    return weights[0] * x + weights[1], grad


x = tf.constant(np.random.rand(16).astype("float32"))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(poly(x) - 3.0 * x))
grads = tape.gradient(loss, [weights])
""",
        ),
        Example(
            "a hand-written swish gradient missing a term (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def swish(x):
    s = tf.sigmoid(x)

    def grad(dy):  # expect: GC301
        return dy * s  # forgets x * s * (1 - s)

    return x * s, grad


dense = keras.layers.Dense(4)
dense.build((None, 3))


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(swish(dense(x))))
    return tape.gradient(loss, dense.trainable_variables)


train_step(np.random.randn(8, 3).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "variable gradients chained with dy (`variables=`, eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

weights = tf.Variable([1.0, 1.0], name="poly")


@tf.custom_gradient
def poly(x):
    def grad(dy, variables=None):
        return dy * weights[0], [tf.stack([tf.reduce_sum(dy * x), tf.reduce_sum(dy)]) for _ in variables]

    return weights[0] * x + weights[1], grad


x = tf.constant(np.random.rand(16).astype("float32"))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(poly(x) - 3.0 * x))
grads = tape.gradient(loss, [weights])
assert grads[0] is not None
""",
        ),
        Example(
            "the correct log1pexp gradient (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(log1pexp(model(x)) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "a straight-through estimator around tf.round is a deliberate surrogate (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def round_ste(x):
    def grad(dy):
        return dy

    return tf.round(x), grad


dense = keras.layers.Dense(4)
dense.build((None, 3))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(round_ste(dense(x) * 4.0) - y))
    return tape.gradient(loss, dense.trainable_variables)


train_step(np.random.randn(8, 3).astype("float32"), np.random.randn(8, 4).astype("float32"))
""",
        ),
    )
