"""GC103: a model output cast to an integer and back inside the tape."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.cast({tf}.cast({name}, {tf}.int32), {name}.dtype)"

    def twin_line(self, name: str) -> str:
        tf = self.ctx.tf  # a float cast keeps the gradient
        return f"{name} = {tf}.cast({tf}.cast({name}, {tf}.float64), {name}.dtype)"


class CastIntOutput(Operator):
    name = "cast_int_output"
    codes = ("GC103",)
    summary = "cast of a forward output to int32 (and back) inside the tape"
    twin_summary = "cast to float64 and back inside the tape"
    transformer = _T
