"""Hypothesis strategies for input sweeps: ``@given(batch=batches(model))`` finds the batch
that sends a step down a branch where the gradient is cut (a Python ``if`` on the data in
an eager step, a ``tf.where`` picking a rounded value...).

Importing this module imports hypothesis (a test dependency), not TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

Spec = tuple[tuple[int | None, ...], str]  # (shape with the batch dimension first, dtype)


def _spec_of(tensor: Any) -> Spec:
    shape = tuple(tensor.shape)
    dtype = getattr(tensor, "dtype", "float32")
    return shape, getattr(dtype, "name", str(dtype))


def _specs(value: Any, what: str) -> list[Spec]:
    """A Keras model's inputs/outputs, a TensorSpec, a (shape, dtype) pair, or a list of them."""
    if hasattr(value, what) and getattr(value, what):
        return [_spec_of(t) for t in getattr(value, what)]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [_spec_of(value)]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        return [(tuple(value[0]), value[1])]
    if isinstance(value, (list, tuple)):
        return [spec for item in value for spec in _specs(item, what)]
    raise TypeError(
        f"cannot tell the {what} of {type(value).__name__}: pass a functional Keras model, "
        "a tf.TensorSpec or a (shape, dtype) pair"
    )


def _array(spec: Spec, batch: int, int_range: tuple[int, int]) -> st.SearchStrategy[np.ndarray]:
    shape, dtype = spec
    shape = (batch, *[d if d is not None else 1 for d in shape[1:]])
    np_dtype = np.dtype(dtype)
    if np_dtype.kind == "f":
        elements = st.floats(-1.0, 1.0, width=min(np_dtype.itemsize * 8, 64), allow_nan=False)
    elif np_dtype.kind in "iu":
        elements = st.integers(*int_range)
    elif np_dtype.kind == "b":
        elements = st.booleans()
    else:
        raise TypeError(f"no strategy for dtype {dtype}")
    return hnp.arrays(np_dtype, shape, elements=elements)


def _pack(arrays: list[np.ndarray]) -> Any:
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def batches(
    model_or_inputs: Any,
    labels: Any = "outputs",
    *,
    batch_size: st.SearchStrategy[int] | None = None,
    int_range: tuple[int, int] = (0, 9),
) -> st.SearchStrategy:
    """Batches shaped and typed for ``model_or_inputs``: ``(x, y)`` when ``labels`` is
    ``"outputs"`` (the model's outputs) or a spec, ``x`` alone when ``labels=None``.
    Floats are in [-1, 1], integers in ``int_range`` (token ids, class labels)."""
    x_specs = _specs(model_or_inputs, "inputs")
    if labels == "outputs":
        y_specs = _specs(model_or_inputs, "outputs")
    elif labels is None:
        y_specs = []
    else:
        y_specs = _specs(labels, "outputs")
    sizes = batch_size if batch_size is not None else st.integers(1, 8)

    @st.composite
    def build(draw):
        n = draw(sizes)
        x = _pack([draw(_array(s, n, int_range)) for s in x_specs])
        if not y_specs:
            return x
        return x, _pack([draw(_array(s, n, int_range)) for s in y_specs])

    return build()


__all__ = ["batches"]
