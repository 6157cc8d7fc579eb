"""GC204 non-finite-loss: the loss of a checked step is NaN or Inf."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NonFiniteLoss(Rule):
    code = "GC204"
    trace_check = "gradcheck.trace.values.nonfinite:check"
    name = "non-finite-loss"
    severity = "error"
    summary = "The loss is NaN or Inf: an op of the forward pass made a non-finite value from finite inputs."
    message = "{reason}: the loss is {kind}"
    what = """
Finds a checked step whose loss (the target of `tape.gradient`, or the loss `fit` computes)
is NaN or ±Inf, and names the first op of the forward pass that made the non-finite value:
walking back from the loss along the values that are not finite, the op whose output is NaN
or Inf while all its inputs are finite. The finding points at the user's line of that op, and
says what made it non-finite: the log of 0 or of a negative value, the square root of a
negative value, a division by zero, an `exp` that overflows, a float16 overflow under mixed
precision, and a `0 * inf` that follows. When other ops on the way to the same loss also made
a non-finite value from finite inputs (the two logs of a focal loss), a note names each of
their lines: fixing the first alone would leave the loss non-finite.

When the first non-finite value is already in the batch (a NaN in the data), the finding says
so and points at where the data entered the step (the `fit` call, or the line that fed the
tensor to the model), not at an op of the model.

With `--steps N` the first step within the N whose loss is not finite is diagnosed (a loss
that turns NaN after a few steps). While `gradcheck.install()`, `watch()` or
`%load_ext gradcheck` is on, every step is guarded, eager or traced (`fit`, a
`tf.function`), and the first step whose loss turns non-finite is diagnosed: a healthy step
pays one `is_finite` reduction on the loss, and a traced step holds no Python op. Under a
`tf.distribute` strategy it is one finding, not one per replica, and the steps after it,
whose weights its update made NaN, are not reported again. Under dynamic loss scaling the
guard looks at the loss before the `LossScaleOptimizer` scaled it: a scaled loss that
overflows is how the optimizer finds its scale, and it skips that step.

Not reported: non-finite values the loss does not see. A `-inf` attention mask before a
softmax, an Inf in the branch of a `tf.where` that is not selected, a NaN in a column of the
data the model never reads: the loss is finite, so nothing is wrong with it. A `-inf` mask
that covers a whole row is another matter: the softmax of that row is 0/0, and is reported.
"""
    why = """
A NaN loss is silent: the progress bar shows `loss: nan`, the optimizer applies NaN
gradients, every weight becomes NaN, and nothing says where the first NaN came from.
`tf.debugging.enable_check_numerics()` stops at the first op that outputs a NaN, but it
slows every step (2.3x a graph step, 12x an eager one), stops at masked values that are
harmless, and names an op, not the line to change or the fix.
"""
    example = """
with tf.GradientTape() as tape:
    probs = model(x)                                   # softmax outputs, some exactly 0
    loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(probs), axis=1))  # log(0) = -inf
"""
    use_instead = """
with tf.GradientTape() as tape:
    logits = model(x)                                  # no softmax in the last layer
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
"""
    fix = (
        "Keep every op of the forward pass inside its domain: an epsilon or a clip on the argument of a log, "
        "sqrt or division, the stable forms of log-probabilities (`tf.nn.log_softmax`, `from_logits=True`, "
        "`tf.math.reduce_logsumexp`), and float32 for the loss under mixed precision."
    )
    fix_variants = {
        "log": (
            "A log of 0 or of a negative value",
            "Keep the log's argument positive: `tf.math.log(x + 1e-7)` or `tf.math.log(tf.maximum(x, 1e-7))`; "
            "for `y * log(p)` use `tf.math.xlogy(y, p)`, and for a log-probability work from logits "
            "(`tf.nn.log_softmax`, a loss with `from_logits=True`).",
        ),
        "log-prob": (
            "A log of a probability that underflowed to 0",
            "Take the log from the logits, not from the probabilities: `tf.nn.log_softmax(logits)` (or "
            "`tf.math.log_sigmoid`), or a Keras loss with `from_logits=True` and no softmax in the last layer.",
        ),
        "log-tanh": (
            "A log of `1 - tanh(u)**2` (a squashed policy's correction)",
            "Compute the correction on the unscaled `tanh(u)` (scale the action only afterwards) and keep it "
            "positive: `tf.math.log(1 - tf.tanh(u) ** 2 + 1e-6)`, or the stable "
            "`2 * (log(2) - u - tf.nn.softplus(-2 * u))`.",
        ),
        "log-signed": (
            "A log of an output that can be negative (a tanh or linear layer)",
            "Take the log only of a positive quantity: give the layer a sigmoid output (values in (0, 1)) or a "
            "softplus for a positive scale, or compute the log-likelihood from logits "
            "(`tf.nn.sigmoid_cross_entropy_with_logits`); an epsilon does not help a negative value, "
            "a clip does (`tf.clip_by_value(x, 1e-7, 1.0)`).",
        ),
        "sqrt": (
            "A square root of a negative value",
            "Keep the argument non-negative: `tf.sqrt(tf.maximum(x, 0.0) + 1e-12)`; a variance computed as "
            "`E[x²] - E[x]²` can go slightly negative: use `tf.math.reduce_variance` or clip it.",
        ),
        "div": (
            "A division by zero",
            "Use `tf.math.divide_no_nan(a, b)` (0 where b is 0), or add an epsilon to the denominator (a std "
            "or a count: `x / (std + 1e-8)`, `total / tf.maximum(count, 1.0)`).",
        ),
        "pow": (
            "A power outside its domain",
            "Keep the base positive for a fractional or negative exponent: `tf.pow(tf.maximum(x, 1e-7), p)`.",
        ),
        "exp": (
            "An exp that overflows",
            "Do not exponentiate large values: use `tf.math.reduce_logsumexp`, `tf.nn.log_softmax` or "
            "`tf.nn.softplus` for the stable form, or clip the argument (`tf.exp(tf.minimum(x, 80.0))`).",
        ),
        "float16": (
            "A float16 overflow under mixed precision",
            "Compute the overflowing value in float32: give the output layer `dtype='float32'` (and the loss "
            "float32 inputs), and scale the loss with a `LossScaleOptimizer`; float16 overflows above 65504.",
        ),
        "empty-mean": (
            "A mean over an empty tensor",
            "A mean of 0 values is 0 / 0 = NaN: a batch with no rows reached the loss. Under `tf.distribute` a "
            "replica gets an empty batch when the data's size is not a multiple of batch_size × replicas: drop "
            "the remainder (`dataset.batch(n, drop_remainder=True)`), or return a per-sample loss (reduce over "
            "the last axis only, `axis=-1`) and let Keras reduce over the global batch; after a mask, divide "
            "with `tf.math.divide_no_nan(tf.reduce_sum(x), count)`.",
        ),
        "overflow": (
            "A float32 overflow",
            "Bring the values into range: normalise the inputs, lower the learning rate or clip the gradients; "
            "the op's result exceeds the largest float32 (3.4e38).",
        ),
        "domain": (
            "An op outside its domain",
            "Clip the op's argument into its domain (for `acos`/`asin`, strictly inside [-1, 1]).",
        ),
        "zero-inf": (
            "An infinite value multiplied by 0",
            "Do not let the infinite value exist: `tf.math.xlogy(x, y)` for `x * log(y)`, `tf.math.multiply_no_nan`, "
            "or an epsilon in the op that made the inf; 0 × inf is NaN.",
        ),
        "inf-constant": (
            "An infinite mask constant met by 0 or by another infinity",
            "Keep the `-inf` mask out of the arithmetic: compute the term only where the mask keeps the "
            "position (`tf.where(mask, tf.nn.log_softmax(logits), 0.0)`), or mask with a large finite negative "
            "number (`-1e9`, or `-65000` in float16) instead of `-inf`; 0 × inf and inf - inf are NaN.",
        ),
        "masked-softmax": (
            "A softmax over a row masked everywhere",
            "Mask with a large finite negative number (`-1e9`, or `-65000` in float16) instead of `-inf`, or keep "
            "one position of every row unmasked: a softmax of a row that is `-inf` everywhere is 0/0.",
        ),
        "data": (
            "A NaN or Inf already in the batch",
            "Clean the data before training: find the rows with `np.isnan(x).any(axis=1)` and drop or impute "
            "them (`np.nan_to_num`, a fill value), or filter the dataset with `tf.math.is_finite`.",
        ),
        "weights": (
            "A NaN or Inf already in a weight",
            "The weights were already non-finite before this step (a NaN update of an earlier step, or a "
            "checkpoint that holds one): check the earlier steps' losses and the loaded weights.",
        ),
    }
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/debugging/enable_check_numerics",
        "https://www.tensorflow.org/api_docs/python/tf/math/divide_no_nan",
        "https://www.tensorflow.org/api_docs/python/tf/math/xlogy",
        "https://www.tensorflow.org/guide/mixed_precision",
    )
    call_names = {
        "Sqrt": ("sqrt", "norm", "euclidean_norm"),
        "Rsqrt": ("rsqrt",),
        "Log": ("log",),
        "Log1p": ("log1p",),
        "RealDiv": ("divide", "truediv", "div"),
        "Reciprocal": ("reciprocal",),
        "Pow": ("pow",),
        "Exp": ("exp",),
        "Acos": ("acos",),
        "Asin": ("asin",),
        "Atan2": ("atan2",),
    }

    invalid = (
        Example(
            "the log of a probability that reached 0 (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)  # at 100x, an unseeded init can saturate every row: a GC201 too
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(8, 4).astype("float32")
y = np.eye(3, dtype="float32")[np.arange(8) % 3]
with tf.GradientTape() as tape:
    probs = tf.nn.softmax(10.0 * model(x))
    probs = tf.where(probs < 1e-3, 0.0, probs)
    loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(probs), axis=1))  # expect: GC204
grads = tape.gradient(loss, model.trainable_variables)
""",
            static=False,
        ),
        Example(
            "a standardisation by the std of a constant batch (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")
returns = np.ones((8, 1), "float32")


@tf.function
def train_step(x, returns):
    with tf.GradientTape() as tape:
        advantage = (returns - tf.reduce_mean(returns)) / tf.math.reduce_std(returns)  # expect: GC204
        loss = tf.reduce_mean(tf.square(model(x) - advantage))
    return tape.gradient(loss, model.trainable_variables)


train_step(x, returns)
""",
            static=False,
        ),
    )
    valid = (
        Example(
            "a -inf attention mask before a softmax (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

proj = keras.layers.Dense(4)
x = np.random.rand(2, 5, 4).astype("float32")
mask = np.triu(np.full((5, 5), -np.inf, "float32"), k=1)
with tf.GradientTape() as tape:
    h = proj(x)
    scores = tf.matmul(h, h, transpose_b=True) + mask
    attention = tf.nn.softmax(scores, axis=-1)
    loss = tf.reduce_mean(tf.square(tf.matmul(attention, h)))
grads = tape.gradient(loss, proj.trainable_variables)
""",
        ),
        Example(
            "an Inf in the branch of a tf.where that is not selected (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(8, 4).astype("float32")
totals = np.random.rand(8, 1).astype("float32")
counts = np.array([[0.0], [2.0]] * 4, "float32")


@tf.function
def train_step(x, totals, counts):
    with tf.GradientTape() as tape:
        mean = tf.where(counts > 0, totals / counts, 0.0)  # inf where counts == 0, not selected
        loss = tf.reduce_mean(tf.square(model(x) - mean))
    return tape.gradient(loss, model.trainable_variables)


train_step(x, totals, counts)
""",
        ),
    )
