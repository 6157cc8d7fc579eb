"""GC201: sigmoid on pre-activations far too large: saturated to exactly 0 or 1.

Report: "In DDPG.V2 the sigmoid saturates, with any scenario",
https://github.com/MorvanZhou/Reinforcement-learning-with-tensorflow/issues/107.
In float32 ``sigmoid(1e4 * x)`` is exactly 0 or 1 wherever ``|x| > ~1e-2``, where its
gradient ``s * (1 - s)`` is exactly 0.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.sigmoid({name} * 1e4)"

    def twin_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.sigmoid({name})"


class SigmoidSaturate(Operator):
    name = "sigmoid_saturate"
    codes = ("GC201",)
    summary = "sigmoid(output * 1e4) inside the tape: a sigmoid head saturated to exactly 0/1"
    twin_summary = "sigmoid(output) inside the tape (not saturated)"
    effect = "zero"
    transformer = _T
