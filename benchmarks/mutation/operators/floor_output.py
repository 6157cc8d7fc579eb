"""GC102: a model output floored inside the tape (a quantisation step without straight-through)."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.floor({name} * 4.0) / 4.0"

    def twin_line(self, name: str) -> str:
        # Straight-through estimator: the floor's value, the identity's gradient.
        tf = self.ctx.tf
        return f"{name} = {name} + {tf}.stop_gradient({tf}.floor({name} * 4.0) / 4.0 - {name})"


class FloorOutput(Operator):
    name = "floor_output"
    codes = ("GC102",)
    summary = "tf.floor quantisation of a forward output inside the tape"
    twin_summary = "the same quantisation with a straight-through estimator"
    transformer = _T
