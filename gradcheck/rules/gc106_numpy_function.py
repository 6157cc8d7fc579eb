"""GC106 numpy-function: tf.numpy_function / py_func have no gradient."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NumpyFunction(Rule):
    code = "GC106"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "numpy-function"
    summary = "`tf.numpy_function` (or `tf.compat.v1.py_func`) is on the path to the loss; it has no gradient."
    message = "{call} runs NumPy code TensorFlow cannot differentiate: {variables} {get} no gradient"
    what = """
Finds `tf.numpy_function` / `tf.compat.v1.py_func` on every path from some variables to the
loss. `tf.py_function` is *not* flagged: TensorFlow differentiates through the TF ops it
runs eagerly.
"""
    why = """
The body of a `tf.numpy_function` is opaque Python working on NumPy arrays. TensorFlow
registers no gradient for it (`PyFunc` is not differentiable), so the variables upstream
get `None`.
"""
    example = """
with tf.GradientTape() as tape:
    y = model(x)
    clipped = tf.numpy_function(lambda a: np.clip(a, 0, 1), [y], tf.float32)
    loss = tf.reduce_mean(clipped)
"""
    use_instead = """
with tf.GradientTape() as tape:
    y = model(x)
    clipped = tf.clip_by_value(y, 0.0, 1.0)
    loss = tf.reduce_mean(clipped)
"""
    fix = (
        "Rewrite the function with TensorFlow ops; or use `tf.py_function`, which differentiates "
        "through the TF ops it runs; or give it an explicit gradient with `tf.custom_gradient`."
    )
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/numpy_function",
        "https://www.tensorflow.org/api_docs/python/tf/py_function",
    )
    op_types = frozenset({"PyFunc", "PyFuncStateless"})
    call_names = {"PyFunc": ("numpy_function", "py_func"), "PyFuncStateless": ("numpy_function", "py_func")}

    invalid = (
        Example(
            "NumPy post-processing through tf.numpy_function (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    logits = model(x)
    clipped = tf.numpy_function(lambda a: np.clip(a, -1.0, 1.0).astype("float32"), [logits], tf.float32)  # expect: GC106
    loss = tf.reduce_mean(tf.square(clipped))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "tf.numpy_function inside a tf.function step",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


def numpy_huber(a):
    return np.where(np.abs(a) < 1, 0.5 * a * a, np.abs(a) - 0.5).astype("float32")


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        error = model(x) - y
        loss = tf.reduce_mean(tf.numpy_function(numpy_huber, [error], tf.float32))  # expect: GC106
    return tape.gradient(loss, model.trainable_variables)


step(np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "tf.py_function differentiates through the TF ops it runs (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    logits = model(x)
    clipped = tf.py_function(lambda a: tf.clip_by_value(a, -1.0, 1.0), [logits], tf.float32)
    loss = tf.reduce_mean(tf.square(clipped))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "tf.numpy_function on the labels only (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function
def step(x, y):
    smoothed = tf.numpy_function(lambda a: (0.9 * a + 0.05).astype("float32"), [y], tf.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - smoothed))
    return tape.gradient(loss, model.trainable_variables)


step(np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32"))
""",
        ),
    )
