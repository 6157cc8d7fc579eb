"""GC101: a model output replaced by the one-hot of its argmax inside the tape (hard predictions)."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True  # argmax after the tape, as for an accuracy metric

    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.one_hot({tf}.argmax({name}, axis=-1), {tf}.shape({name})[-1], dtype={name}.dtype)"

    def twin_line(self, name: str) -> str:
        return f"{name}_label = {self.ctx.tf}.argmax({name}, axis=-1)"


class ArgmaxOutput(Operator):
    name = "argmax_output"
    codes = ("GC101",)
    summary = "one_hot(argmax(output)) right after a forward call inside the tape"
    twin_summary = "argmax of the output after the tape (a metric)"
    transformer = _T
