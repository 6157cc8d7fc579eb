"""GC107: an action sampled from the policy's logits (``tf.random.categorical``) used as the value.

Report: "will the multinomial sampling operation break the gradient back propagation?",
https://github.com/openai/spinningup/issues/171 (and the same question for sampled actions,
https://github.com/hill-a/stable-baselines/issues/672): the sample is an integer draw, with
no gradient to the logits.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True  # sampling an action after the update's tape, as a rollout does

    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return (
            f"{name} = {tf}.one_hot({tf}.random.categorical({name}, 1)[:, 0], "
            f"{tf}.shape({name})[-1], dtype={name}.dtype)"
        )

    def twin_line(self, name: str) -> str:
        return f"{name}_action = {self.ctx.tf}.random.categorical({name}, 1)"


class SampleOutput(Operator):
    name = "sample_output"
    codes = ("GC107",)
    summary = "one_hot(random.categorical(output, 1)) inside the tape: a sampled action as the value"
    twin_summary = "random.categorical(output, 1) after the tape (a rollout's action)"
    transformer = _T
