"""GC113 variable-assign: a value written into a tf.Variable and read back."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class VariableAssign(Rule):
    code = "GC113"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "variable-assign"
    summary = "A value computed from the variables is written into a variable with `assign` and read back: assignment is not differentiable."
    message = (
        "{call} writes into a variable, and assignment is not differentiable: {variables} {get} no gradient through it"
    )
    what = """
Finds a path from the variables to the loss that goes through `Variable.assign`
(`assign_add`, `assign_sub`, `scatter_*`) and a later read of the assigned variable. The
meta-learning inner step written as `model_copy_weight.assign(w - lr * g)` is the usual
way in; memory layers that store a state in a variable are another.
"""
    why = """
An assignment is a side effect, not a function: the tape does not connect the value read
back from a variable to the value that was written into it. The meta-gradient (or the
gradient through the memory) is `None`.
"""
    example = """
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = loss_fn(model(x_train), y_train)
    grads = inner.gradient(inner_loss, model.trainable_variables)
    for w_copy, w, g in zip(copy.trainable_variables, model.trainable_variables, grads):
        w_copy.assign(w - lr * g)
    meta_loss = loss_fn(copy(x_test), y_test)
"""
    use_instead = """
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = loss_fn(model(x_train), y_train)
    grads = inner.gradient(inner_loss, model.trainable_variables)
    fast = [w - lr * g for w, g in zip(model.trainable_variables, grads)]
    meta_loss = loss_fn(functional_forward(fast, x_test), y_test)
"""
    fix = (
        "Compute with the tensor instead of assigning it into a variable: keep the adapted weights "
        "as tensors (`fast = w - lr * g`) and run the forward pass functionally with them "
        "(e.g. `keras.Model.stateless_call(fast_weights, [], x)`)."
    )
    fix_variants = {
        "metric": (
            "When the assignment is a Keras metric object's (a metric used as the loss)",
            "`{call}` is a Keras metric: it adds each batch into its running state with `assign` and "
            "returns that state, which has no gradient. Use the loss of the same name instead "
            "(`keras.losses.<Name>` for `keras.metrics.<Name>`, e.g. `keras.losses.MeanSquaredError()`), "
            "and keep the metric in `metrics=[...]`.",
        ),
    }
    references = ("https://www.tensorflow.org/guide/autodiff#stateful_ops_stop_gradients",)
    op_types = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
    call_names = {
        "AssignVariableOp": ("assign",),
        "AssignAddVariableOp": ("assign_add",),
        "AssignSubVariableOp": ("assign_sub",),
    }

    invalid = (
        Example(
            "MAML inner step assigned into a copy of the model (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


def make():
    return keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])


model, copy = make(), make()
x, y = np.random.rand(10, 1).astype("float32"), np.random.rand(10, 1).astype("float32")
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = inner.gradient(inner_loss, model.trainable_variables)
    for w_copy, w, g in zip(copy.trainable_variables, model.trainable_variables, grads):
        w_copy.assign(w - 0.01 * g)  # expect: GC113
    meta_loss = tf.reduce_mean(tf.square(copy(x) - y))
meta_grads = outer.gradient(meta_loss, model.trainable_variables)
""",
        ),
        Example(
            "a memory variable written and read back inside a tf.function step",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

encoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
memory = tf.Variable(tf.zeros((8, 3)), trainable=False, name="memory")


@tf.function
def step(x):
    with tf.GradientTape() as tape:
        memory.assign(encoder(x))  # expect: GC113
        loss = tf.reduce_mean(tf.square(memory.read_value()))
    return tape.gradient(loss, encoder.trainable_variables)


step(np.random.rand(8, 4).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "MAML with functional fast weights (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

w = tf.Variable(np.random.rand(1, 1).astype("float32"), name="w")
b = tf.Variable(np.zeros(1, "float32"), name="b")
x, y = np.random.rand(10, 1).astype("float32"), np.random.rand(10, 1).astype("float32")
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = tf.reduce_mean(tf.square(x @ w + b - y))
    gw, gb = inner.gradient(inner_loss, [w, b])
    fast_w, fast_b = w - 0.01 * gw, b - 0.01 * gb
    meta_loss = tf.reduce_mean(tf.square(x @ fast_w + fast_b - y))
meta_grads = outer.gradient(meta_loss, [w, b])
assert all(g is not None for g in meta_grads)
""",
        ),
        Example(
            "an EMA copy updated with assign, outside the gradient path (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
ema = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for e, v in zip(ema, model.trainable_variables):
        e.assign(0.99 * e + 0.01 * v)
    return grads


step(np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32"))
""",
        ),
    )
