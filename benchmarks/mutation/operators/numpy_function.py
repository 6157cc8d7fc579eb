"""GC106: a forward output routed through ``tf.numpy_function`` inside the tape."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.ensure_shape({tf}.numpy_function(lambda a: a, [{name}], {name}.dtype), {name}.shape)"

    def twin_line(self, name: str) -> str:
        tf = self.ctx.tf  # tf.py_function is differentiable through the TF ops it runs
        return f"{name} = {tf}.ensure_shape({tf}.py_function(lambda a: a * 1.0, [{name}], {name}.dtype), {name}.shape)"


class NumpyFunction(Operator):
    name = "numpy_function"
    codes = ("GC106",)
    summary = "tf.numpy_function identity on a forward output inside the tape"
    twin_summary = "tf.py_function of TF ops on the output (differentiable)"
    transformer = _T
