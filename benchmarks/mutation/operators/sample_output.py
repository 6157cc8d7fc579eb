"""GC107: an action sampled from the policy's logits (``tf.random.categorical``) used as the value.

Reports: a generator whose ``tf.multinomial`` samples feed the discriminator's loss, "How the
gradients pass down if there's a tf.multinomial() sampling process?",
https://github.com/LantaoYu/SeqGAN/issues/31; the same question for a policy's sampled action,
https://github.com/openai/spinningup/issues/171. The sample is an integer draw, with no
gradient to the logits.
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
