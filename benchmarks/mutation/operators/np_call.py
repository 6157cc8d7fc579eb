"""GC105: a NumPy function applied to a forward output inside the tape."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Context, Operator


class _T(AfterForward):
    twin_outside = True
    twin_eager_only = True

    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.np}.maximum({name}, -1e9)"

    def twin_line(self, name: str) -> str:
        return f"{name}_max = {self.ctx.np}.max({name})"


class NpCall(Operator):
    name = "np_call"
    codes = ("GC105",)
    summary = "np.maximum(output, -1e9) inside the tape"
    twin_summary = "np.max(output) after the tape (eager code only)"
    crash_ok = True
    transformer = _T

    def applicable(self, ctx: Context) -> bool:
        return ctx.tf is not None and ctx.np is not None
