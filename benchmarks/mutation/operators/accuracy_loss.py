"""GC103: hard predictions by comparison (``equal(output, max(output))``), accuracy-style, in the loss.

Report: an accuracy computed with comparisons used as the Keras loss, "ValueError: None values
not supported", https://github.com/keras-team/keras/issues/9712.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True  # the same comparison after the tape (an accuracy metric)

    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.cast({tf}.equal({name}, {tf}.reduce_max({name}, axis=-1, keepdims=True)), {name}.dtype)"

    def twin_line(self, name: str) -> str:
        tf = self.ctx.tf
        return (
            f"{name}_hit = {tf}.cast({tf}.equal({name}, {tf}.reduce_max({name}, axis=-1, keepdims=True)), {tf}.float32)"
        )


class AccuracyLoss(Operator):
    name = "accuracy_loss"
    codes = ("GC103",)
    summary = "cast(equal(output, reduce_max(output))) inside the tape: accuracy-style hard predictions"
    twin_summary = "the same comparison after the tape (a metric)"
    transformer = _T
