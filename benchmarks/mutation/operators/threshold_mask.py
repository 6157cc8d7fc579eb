"""GC201: a hard threshold mask multiplied onto the path (never open: zero gradient)."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {name} * {self.ctx.tf}.cast({name} > 1e9, {name}.dtype)"

    def twin_line(self, name: str) -> str:
        return f"{name} = {name} * {self.ctx.tf}.cast({name} > -1e9, {name}.dtype)"  # always open


class ThresholdMask(Operator):
    name = "threshold_mask"
    codes = ("GC201",)
    summary = "output * cast(output > 1e9) inside the tape"
    twin_summary = "the same mask with a threshold every value passes"
    effect = "zero"
    transformer = _T
