"""GC204: a value standardised by the std of a set of numbers that are all equal.

Reports: inputs standardised with ``(x - mean) / std`` where a column is constant (std 0)
turn NaN and so does the loss; fixed by adding a small value to the std,
https://github.com/keras-team/keras/issues/2134 (comment of 2019-04-15), also
https://github.com/mllam/neural-lam/issues/136 and https://github.com/fastai/fastai/issues/889.
The mutant standardises a forward output over its last axis inside the tape: a single
output per row (a critic's value, a regression or binary head) is a constant set, std 0,
and ``0 / 0`` is NaN; over several outputs it is finite (then the mutant has no effect
TensorFlow reports as a non-finite loss, and is not scored).
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return (
            f"{name} = ({name} - {tf}.reduce_mean({name}, axis=-1, keepdims=True)) / "
            f"{tf}.math.reduce_std({name}, axis=-1, keepdims=True)"
        )

    def twin_line(self, name: str) -> str:
        tf = self.ctx.tf  # standardised over the batch, with an epsilon: a batch-norm-like head
        return f"{name} = ({name} - {tf}.reduce_mean({name}, axis=0)) / ({tf}.math.reduce_std({name}, axis=0) + 1e-3)"


class StdNormalise(Operator):
    name = "std_normalise"
    codes = ("GC204",)
    summary = "output standardised over its last axis by its std inside the tape (std 0 on a single output: 0/0)"
    twin_summary = "output standardised over the batch, std + 1e-3"
    effect = "nonfinite-loss"
    transformer = _T
