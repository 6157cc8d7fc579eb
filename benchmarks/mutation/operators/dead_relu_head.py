"""GC201: a ReLU head dead on the whole batch (every pre-activation negative).

Reports: "Sometimes the initial solution predicts only zeros (due to RELU activation). And
hence, no gradients emerge", https://github.com/jvargasmu/population_estimation/issues/68;
dead ReLUs in Keras models, https://github.com/keras-team/keras/issues/7057.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.nn.relu({name} - 1e4)"  # a bias far below every pre-activation

    def twin_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.nn.relu({name} + 1e4)"  # a ReLU alive on every value


class DeadReluHead(Operator):
    name = "dead_relu_head"
    codes = ("GC201",)
    summary = "relu(output - 1e4) inside the tape: a ReLU head dead on the whole batch"
    twin_summary = "relu(output + 1e4) inside the tape (alive everywhere)"
    effect = "zero"
    transformer = _T
