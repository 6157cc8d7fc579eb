"""GC105: ``.numpy()`` on a forward output inside the tape (fails at trace time in a graph)."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True
    twin_eager_only = True

    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.constant({name}.numpy())"

    def twin_line(self, name: str) -> str:
        return f"{name}_logged = float({self.ctx.tf}.reduce_mean({name}).numpy())"


class NumpyMethod(Operator):
    name = "numpy_method"
    codes = ("GC105",)
    summary = "tf.constant(output.numpy()) inside the tape"
    twin_summary = "output.numpy() for logging after the tape (eager code only)"
    crash_ok = True
    transformer = _T
