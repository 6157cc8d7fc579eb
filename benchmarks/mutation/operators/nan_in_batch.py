"""GC204: a NaN in the batch the model is fed.

Reports: a loss that is NaN from the first step because the input data holds NaN values,
https://github.com/unit8co/darts/issues/881 ("the first guess when you have nan values in
your loss is that you have nan values in your input data"), also
https://github.com/prs-eth/Marigold/issues/111 and https://github.com/keras-team/keras/issues/2134.
The mutant writes NaN into the first example of the batch right before the forward call
inside the tape (the data a loader would have delivered); the twin writes the same
example back unchanged. The finding belongs where the data entered the step: the line
that wrote it, or the forward call that first read it.
"""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if not self.in_tape or len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
            return updated
        value = original.body[0].value
        if not self.is_forward_call(value) or not value.args or value.args[0].keyword is not None:
            return updated
        batch = value.args[0].value
        if not isinstance(batch, cst.Name) or batch.value == "self" or not self.hit():
            return updated
        x, tf = batch.value, self.ctx.tf
        factor = "1.0" if self.twin else 'float("nan")'
        new = self.stmt(f"{x} = {tf}.concat([{x}[:1] * {factor}, {x}[1:]], axis=0)")
        self.detail = f"NaN written into {x}[0] before the forward call" if not self.twin else f"{x}[0] * 1.0"
        return cst.FlattenSentinel([new, self.mark(updated)])


class NanInBatch(Operator):
    name = "nan_in_batch"
    codes = ("GC204",)
    summary = "x = tf.concat([x[:1] * nan, x[1:]], 0) right before a forward call inside the tape"
    twin_summary = "the same with `* 1.0` (the batch unchanged)"
    effect = "nonfinite-loss"
    transformer = _T
