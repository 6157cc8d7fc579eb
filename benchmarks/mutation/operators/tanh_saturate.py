"""GC201: tanh on pre-activations far too large (an unnormalised input): saturated to exactly +-1.

Report: a DDPG actor whose tanh output saturates until the state is normalised,
https://github.com/ZhihanLee/DDPG_Learning/issues/2 (also https://github.com/rmst/ddpg/issues/9).
In float32 ``tanh(1e4 * x)`` is exactly +-1 wherever ``|x| > ~1e-3``, and its gradient
``1 - tanh**2`` exactly 0: the gradient arrives, identically zero.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.tanh({name} * 1e4)"

    def twin_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.tanh({name})"  # the same squashing, on values of normal scale


class TanhSaturate(Operator):
    name = "tanh_saturate"
    codes = ("GC201",)
    summary = "tanh(output * 1e4) inside the tape: a tanh head on unnormalised pre-activations, saturated to +-1"
    twin_summary = "tanh(output) inside the tape (not saturated)"
    effect = "zero"
    transformer = _T
