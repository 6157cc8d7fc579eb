"""GC104: ``tf.stop_gradient`` on the only path from a forward output to the loss."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.stop_gradient({name})"

    def twin_line(self, name: str) -> str:
        return f"{name}_target = {self.ctx.tf}.stop_gradient({name})"  # a detached copy, unused by the loss


class StopGradientPath(Operator):
    name = "stop_gradient_path"
    codes = ("GC104",)
    summary = "tf.stop_gradient(output) inside the tape"
    twin_summary = "a detached copy of the output beside the live one"
    transformer = _T
