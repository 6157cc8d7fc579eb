"""GC201 zero-gradient: the gradient arrives, and it is identically zero."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class ZeroGradient(Rule):
    code = "GC201"
    trace_check = "gradcheck.trace.values.degenerate:check"
    name = "zero-gradient"
    severity = "warning"
    summary = "A variable's gradient arrives but is identically zero on the checked batch, for a structural reason."
    message = "{reason}: {variables} {get} an all-zero gradient"
    what = """
Finds variables whose gradient is not None but exactly zero in every element on the first
checked step, and the op where it became zero: walking back from the loss, the first op
whose output gradient is nonzero while its input's gradient is zero. It names why that op
lets nothing through:

- a step function: `tf.sign` (or a hard threshold built from it, `(tf.sign(x) + 1) / 2`),
  whose gradient TensorFlow defines as zero everywhere, so no batch changes it; likewise a
  second derivative through relu or max-pooling (a gradient penalty, a PDE residual);
- a ReLU dead on the whole batch (every input ≤ 0);
- a softmax, sigmoid or tanh saturated on the whole batch (outputs exactly 0 or 1), often
  then clipped by a loss that expects probabilities (`from_logits=False`);
- a clip, `tf.maximum`/`tf.minimum`, or a `tf.where` whose condition never selects the
  branch the variables are on (a clip that clips everything only because what it clips was
  made all zero upstream, by a mask, is reported at that mask);
- a factor that is zero: an all-zero mask, a multiplication by a constant 0, or a weight
  that is zero and never receives a gradient itself (everything zero-initialised);
- two paths whose gradients cancel exactly (the log-probability of a reparameterised
  sample taken with respect to the distribution's own parameters);
- a `tf.while_loop` / `TensorArray` in a traced function whose body cuts the value: graph
  mode gives zeros there, not None. (A cut *after* the loop, on one of its outputs, also
  gives zeros; that is reported as the cut itself, GC102/GC103/GC104..., not as GC201. A
  body that computes a value with the model's weights and then drops it, `y = layer(h)`
  never carried on, is GC108 at that line.)
- an integer cast or a rounding of the variables' own values that leaves 0 on the whole
  batch, multiplying their other paths: one of two views cast to `int32` (ReLU features in
  [0, 1) become 0) makes every similarity, hence every gradient through the other view,
  zero. TensorFlow gives zeros, not None (the other view's path is alive), and the cut is
  reported as itself, GC103/GC102 at the cast, with a note saying so. A mask made by a
  comparison (`tf.cast(x > t, x.dtype)`) closed on the whole batch stays GC201.

Only structural zeros are reported: the zero must survive a 1% perturbation of the op's
input, and must not come from the batch itself (an all-zero input batch is chance). A
weight initialised to zero that does get a gradient (LoRA's `B`, ReZero's `alpha`) is not
reported: the first update moves it.
"""
    why = """
A zero gradient is silent: no error, no warning, `None` nowhere; the optimizer applies a
zero update and the variables never move. The loss stays flat (`16.1181` for a
categorical cross-entropy clipping a saturated softmax at `1e-7`), or only part of the
network learns. `unconnected_gradients=ZERO` produces the same symptom on purpose; that case
is reported as the GC1xx cause it hides, never as GC201.
"""
    example = """
model = keras.Sequential([
    keras.Input((20,)),
    keras.layers.Dense(10, activation="softmax"),  # saturates with large inputs
])
model.compile(loss="categorical_crossentropy", optimizer="adam")
model.fit(x * 1000.0, y)  # loss stuck at 16.1181: every clipped probability has zero gradient
"""
    use_instead = """
model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(10)])  # logits
model.compile(loss=keras.losses.CategoricalCrossentropy(from_logits=True), optimizer="adam")
model.fit(x / x.std(), y)
"""
    fix = (
        "Find why the marked op passes no gradient on this batch and remove the cause: keep the path "
        "differentiable where the loss needs it (no hard mask, clip or saturated activation on the whole path)."
    )
    fix_variants = {
        "dead-relu": (
            "A ReLU dead on the whole batch",
            "Bring the pre-activations back to both signs: normalise the inputs, fix a large negative bias or "
            "initialiser (use `he_normal` and zero biases), lower the learning rate, or use a leaky activation "
            "(`keras.layers.LeakyReLU`, `activation='gelu'`).",
        ),
        "saturated": (
            "A saturated softmax/sigmoid/tanh",
            "Bring the activation's inputs back from saturation: scale the inputs (standardise each feature, "
            "e.g. with a `keras.layers.Normalization` layer adapted on the data) or lower the initial weights, "
            "so its pre-activations are not in the tens or hundreds. Where it only feeds a classification loss, "
            "do not squash before the loss: output logits (no activation on the last layer) and use a loss that "
            "takes them (`from_logits=True`, `tf.nn.softmax_cross_entropy_with_logits`, "
            "`tf.nn.sigmoid_cross_entropy_with_logits`).",
        ),
        "saturated-clipped": (
            "A saturated softmax/sigmoid whose outputs a probability loss clips",
            "Compute the loss from logits, not from clipped probabilities: return the logits (drop the final "
            "{act}, or `activation='{act}'` on the last layer) and use a loss that takes them "
            "(`keras.losses.CategoricalCrossentropy(from_logits=True)`, `BinaryCrossentropy(from_logits=True)`, "
            "`tf.nn.softmax_cross_entropy_with_logits`, `tf.nn.sigmoid_cross_entropy_with_logits`); a log-space "
            "loss never clips. Normalise the inputs too (pixels / 255).",
        ),
        "clipped": (
            "A clip that cuts every value",
            "Clip only where you mean to (the clip range may be wrong, or the values far outside it): scale or "
            "standardise the inputs so the values fall inside the range, use a smooth bound (`tf.nn.softplus`, "
            "`tf.tanh` scaling), compute a probability loss from logits (`tf.nn.sigmoid_cross_entropy_with_logits`) "
            "instead of clipping probabilities, or clip only the forward value with a straight-through clip "
            "(`x + tf.stop_gradient(tf.clip_by_value(x, lo, hi) - x)`, tfp's `clip_by_value_preserve_gradient`).",
        ),
        "masked": (
            "A tf.where whose condition never selects the branch",
            "Check the condition (a wrong comparison, threshold or dtype makes it constant); if the masked "
            "branch is meant to train, make sure some elements select it, or weight the loss instead of masking.",
        ),
        "zero-mask": (
            "A mask that is zero everywhere",
            "Check how the mask is built (a wrong comparison, an integer cast that truncates to 0, a one-hot with "
            "the wrong depth or indices); a mask that is all zero on every batch trains nothing.",
        ),
        "one-class": (
            "A softmax or log_softmax over an axis of size 1 (one class, a list of one item)",
            "Normalise over the axis that holds the alternatives: group the scores so that axis has more than "
            "one entry (the documents of one query, `tf.reshape(scores, [n_lists, list_size])`), squeeze a "
            "trailing axis of size 1, or, for one output, use a sigmoid with a binary cross-entropy.",
        ),
        "zero-constant": (
            "A multiplication by a constant zero",
            "Remove the zero factor (a loss weight of 0, `0 *` left from debugging), or drop the term from the "
            "loss if it is not meant to train.",
        ),
        "zero-weight": (
            "A zero weight that never gets a gradient",
            "Do not zero-initialise every weight of a chain: use the layer's default initialiser (`glorot_uniform`, "
            "`he_normal`) for all but at most one factor, and make sure the zero one ({weight}) is trained.",
        ),
        "cancel": (
            "Two paths whose gradients cancel",
            "Stop the gradient on one path: for the log-probability of a reparameterised sample, take it on "
            "`tf.stop_gradient(sample)` (a score-function term) or train through the sample's other uses "
            "(the critic in SAC); with TensorFlow Probability, use `dist.sample()` for the pathwise term and "
            "`dist.log_prob(tf.stop_gradient(action))` for the likelihood.",
        ),
        "identical": (
            "A difference of a value with the same computation of itself",
            "Compute the reference side once, outside the gradient: for a PPO ratio, use the old policy's "
            "log-probabilities stored with the rollout (or `tf.stop_gradient(old_log_prob)`), so that "
            "`exp(log_prob - old_log_prob)` differentiates through the new policy only.",
        ),
        "loop": (
            "A while loop / TensorArray that cuts the value",
            "Keep the loop's carried value differentiable: write the model's output itself into the "
            "TensorArray (`ta = ta.write(i, y)`, and keep the returned `ta`), return the accumulated tensor "
            "from the loop instead of rebuilding it from Python values, and avoid `tf.stop_gradient`, integer "
            "casts or `.numpy()` inside the body.",
        ),
        "step": (
            "A step function (`tf.sign`) on the path",
            "TensorFlow defines the gradient of `tf.sign` as zero everywhere, so nothing before it ever trains. "
            "Train through a straight-through estimator, `x + tf.stop_gradient(tf.sign(x) - x)` (the sign "
            "forward, the identity backward), or a smooth surrogate such as `tf.tanh(k * x)` (a larger `k` is "
            "closer to the step); keep the hard `tf.sign` for inference, or apply it after the tape to the value "
            "you report.",
        ),
        "second-derivative": (
            "A second derivative through relu or max-pooling",
            "A piecewise-linear op has a zero second derivative: a loss built from a gradient (a gradient "
            "penalty, a PDE residual, a curvature term) gets nothing through relu's or max-pooling's input. Use a "
            "smooth activation (`tf.nn.softplus`, `gelu`, `swish`, `tanh`) and average pooling in the layers that "
            "loss differentiates twice.",
        ),
    }
    doc_fields = {"act": "softmax", "weight": "dense/kernel"}
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy",
        "https://www.tensorflow.org/api_docs/python/tf/where",
        "https://github.com/keras-team/keras/issues/2194",
    )
    call_names = {
        "Relu": ("relu", "Dense", "Conv2D", "Activation"),
        "Softmax": ("softmax", "Dense", "Activation"),
        "Sigmoid": ("sigmoid", "Dense", "Activation"),
        "Maximum": ("maximum", "clip_by_value", "clip"),
        "Minimum": ("minimum", "clip_by_value", "clip"),
        "SelectV2": ("where",),
        "While": ("while_loop",),
    }

    invalid = (
        Example(
            "a ReLU layer dead on the whole batch (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential(
    [
        keras.Input((8,)),
        keras.layers.Dense(16, activation="relu", bias_initializer=keras.initializers.Constant(-20.0)),  # expect: GC201
        keras.layers.Dense(1),
    ]
)
optimizer = keras.optimizers.SGD(0.01)
x = np.random.rand(32, 8).astype("float32")
y = np.random.rand(32, 1).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
        ),
        Example(
            "a saturated sigmoid clipped by a hand-written cross-entropy (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


def binary_crossentropy(y_true, y_pred):
    p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
    return -tf.reduce_mean(y_true * tf.math.log(p) + (1.0 - y_true) * tf.math.log(1.0 - p))


model = keras.Sequential(
    [
        keras.Input((20,)),
        keras.layers.Dense(1, activation="sigmoid", bias_initializer=keras.initializers.Constant(40.0)),  # expect: GC201
    ]
)
model.compile(optimizer="adam", loss=binary_crossentropy)
x = np.random.rand(64, 20).astype("float32")
y = np.random.randint(0, 2, size=(64, 1)).astype("float32")
model.fit(x, y, epochs=2, verbose=0)
""",
        ),
        Example(
            "a tf.where that never selects the trained branch (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        pred = net(x)[:, 0]
        error = tf.where(y > 10.0, pred - y, tf.zeros_like(y))  # expect: GC201
        loss = tf.reduce_mean(tf.square(error))
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return loss


for _ in range(3):
    train_step(np.random.rand(16, 4).astype("float32"), np.random.rand(16).astype("float32"))
""",
        ),
        Example(
            "tf.sign on the model's output: its gradient is zero everywhere (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(0.01)
x = np.random.rand(32, 8).astype("float32")
y = np.sign(np.random.randn(32, 1)).astype("float32")
with tf.GradientTape() as tape:
    pred = tf.sign(model(x))  # expect: GC201
    loss = tf.reduce_mean(tf.square(pred - y))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
        ),
        Example(
            "a hard decision with tf.sign inside the training step (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        decision = tf.sign(net(x)[:, 0])  # expect: GC201
        loss = tf.reduce_mean(tf.square(decision - y))
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return loss


for _ in range(3):
    train_step(np.random.rand(16, 4).astype("float32"), np.sign(np.random.randn(16)).astype("float32"))
""",
        ),
        Example(
            "a threshold mask no probability passes, then the loss's clip: the mask is the cause (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.random.normal([20, 10]) * 0.1, name="w")
b = tf.Variable(tf.zeros([10]), name="b")
x = np.random.rand(64, 20).astype("float32")
y = np.random.randint(0, 10, size=64)
with tf.GradientTape() as tape:
    probs = tf.nn.softmax(tf.matmul(x, w) + b)
    probs = probs * tf.cast(probs > 1e9, probs.dtype)  # expect: GC201
    p = tf.clip_by_value(probs, 1e-9, 1.0)  # clips everything, but only because the mask zeroed it
    loss = -tf.reduce_mean(tf.reduce_sum(tf.one_hot(y, 10) * tf.math.log(p), axis=-1))
grads = tape.gradient(loss, [w, b])
""",
        ),
        Example(
            "a PPO ratio whose old log-probability is the same computation as the new one (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3)])
obs = np.random.rand(32, 6).astype("float32")
actions = np.random.randint(0, 3, 32)
advantages = np.random.randn(32).astype("float32")


def log_prob(logits):
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)


with tf.GradientTape() as tape:
    logits = policy(obs)
    new = log_prob(logits)
    old = log_prob(logits)  # expect: GC201
    ratio = tf.exp(new - old)
    loss = -tf.reduce_mean(tf.minimum(ratio * advantages, tf.clip_by_value(ratio, 0.8, 1.2) * advantages))
grads = tape.gradient(loss, policy.trainable_variables)
""",
        ),
    )
    valid = (
        Example(
            "a PPO ratio whose old log-probability is stopped (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

policy = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3)])
obs = np.random.rand(32, 6).astype("float32")
actions = np.random.randint(0, 3, 32)
advantages = np.random.randn(32).astype("float32")


def log_prob(logits):
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)


with tf.GradientTape() as tape:
    logits = policy(obs)
    new = log_prob(logits)
    old = tf.stop_gradient(log_prob(logits))
    ratio = tf.exp(new - old)
    loss = -tf.reduce_mean(tf.minimum(ratio * advantages, tf.clip_by_value(ratio, 0.8, 1.2) * advantages))
grads = tape.gradient(loss, policy.trainable_variables)
assert all(g is not None and float(tf.reduce_max(tf.abs(g))) > 0 for g in grads)
""",
        ),
        Example(
            "a batch the model already fits exactly: zero by chance, not by structure (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])  # the bias starts at zero
x = np.zeros((4, 3), "float32")  # so the prediction is zero on this batch ...
y = np.zeros((4, 2), "float32")  # ... and so is the target: every gradient is zero here
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "a one-sample step whose ReLU units happen to be negative on that sample (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

hidden = keras.layers.Dense(4, activation="relu")
head = keras.layers.Dense(1)
model = keras.Sequential([keras.Input((2,)), hidden, head])
hidden.set_weights([np.array([[-0.3, -0.1, -0.2, -0.05], [0.5, 0.5, 0.5, 0.5]], "float32"), np.zeros(4, "float32")])
x = np.array([[1.0, 0.0]], "float32")  # off on this sample, on for one like [0, 1]: a draw, not a dead layer
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "logits with a from_logits loss (model.fit)",
            "fit",
            """\
import keras
import numpy as np

model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(10)])
model.compile(optimizer="adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
x = np.random.rand(64, 20).astype("float32")
y = keras.utils.to_categorical(np.random.randint(0, 10, size=64), 10)
model.fit(x, y, epochs=2, verbose=0)
""",
        ),
        Example(
            "a LoRA adapter whose B starts at zero: A's first gradient is zero, but B trains (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

base = tf.constant(np.random.rand(8, 4).astype("float32"))
lora_a = tf.Variable(tf.random.normal([8, 2]), name="lora_a")
lora_b = tf.Variable(tf.zeros([2, 4]), name="lora_b")
x = np.random.rand(16, 8).astype("float32")
y = np.random.rand(16, 4).astype("float32")
with tf.GradientTape() as tape:
    pred = tf.matmul(x, base) + tf.matmul(tf.matmul(x, lora_a), lora_b)
    loss = tf.reduce_mean(tf.square(pred - y))
grads = tape.gradient(loss, [lora_a, lora_b])
""",
        ),
        Example(
            "a padding mask that keeps some elements (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function
def train_step(x, y, mask):
    with tf.GradientTape() as tape:
        pred = net(x)[:, 0]
        loss = tf.reduce_sum(tf.square(pred - y) * mask) / tf.reduce_sum(mask)
    return tape.gradient(loss, net.trainable_variables)


mask = np.array([1.0] * 10 + [0.0] * 6, dtype="float32")
train_step(np.random.rand(16, 4).astype("float32"), np.random.rand(16).astype("float32"), mask)
""",
        ),
        Example(
            "a straight-through estimator: tf.sign forward, the identity backward (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
x = np.random.rand(32, 8).astype("float32")
y = np.sign(np.random.randn(32, 1)).astype("float32")
with tf.GradientTape() as tape:
    h = model(x)
    pred = h + tf.stop_gradient(tf.sign(h) - h)
    loss = tf.reduce_mean(tf.square(pred - y))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "tf.sign applied after the tape, to the reported decision only (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
x = np.random.rand(32, 8).astype("float32")
y = np.sign(np.random.randn(32, 1)).astype("float32")
with tf.GradientTape() as tape:
    pred = model(x)
    loss = tf.reduce_mean(tf.square(pred - y))
grads = tape.gradient(loss, model.trainable_variables)
decision = tf.sign(pred)
""",
        ),
        Example(
            "a threshold mask most probabilities pass, then the loss's clip (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.random.normal([20, 10]) * 0.1, name="w")
b = tf.Variable(tf.zeros([10]), name="b")
x = np.random.rand(64, 20).astype("float32")
y = np.random.randint(0, 10, size=64)
with tf.GradientTape() as tape:
    probs = tf.nn.softmax(tf.matmul(x, w) + b)
    probs = probs * tf.cast(probs > 1e-3, probs.dtype)  # drops only negligible probabilities
    p = tf.clip_by_value(probs, 1e-9, 1.0)
    loss = -tf.reduce_mean(tf.reduce_sum(tf.one_hot(y, 10) * tf.math.log(p), axis=-1))
grads = tape.gradient(loss, [w, b])
""",
        ),
    )
