"""GC106 numpy-function: tf.numpy_function / py_func have no gradient."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class NumpyFunction(Rule):
    code = "GC106"
    name = "numpy-function"
    summary = "`tf.numpy_function` (or `tf.compat.v1.py_func`) is on the path to the loss; it has no gradient."
    message = "{call} runs NumPy code TensorFlow cannot differentiate: {variables} get no gradient"
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
