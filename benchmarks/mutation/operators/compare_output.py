"""GC103: a model output replaced by a comparison (a hard decision) inside the tape."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True

    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.cast({name} > 0, {name}.dtype)"

    def twin_line(self, name: str) -> str:
        return f"{name}_positive = {self.ctx.tf}.reduce_mean({self.ctx.tf}.cast({name} > 0, {name}.dtype))"


class CompareOutput(Operator):
    name = "compare_output"
    codes = ("GC103",)
    summary = "cast(output > 0) on a forward output inside the tape"
    twin_summary = "the same comparison after the tape (a metric)"
    transformer = _T
