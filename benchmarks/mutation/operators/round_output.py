"""GC102: a model output rounded inside the tape."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True

    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.round({name})"

    def twin_line(self, name: str) -> str:
        return f"{name}_rounded = {self.ctx.tf}.round({name})"


class RoundOutput(Operator):
    name = "round_output"
    codes = ("GC102",)
    summary = "tf.round on a forward output inside the tape"
    twin_summary = "tf.round of the output after the tape"
    transformer = _T
