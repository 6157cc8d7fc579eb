"""GC201: softmax probabilities clipped to [eps, 1 - eps] where the softmax is saturated.

Reports: ``y_pred = K.clip(y_pred, eps, 1. - eps)`` in a Keras focal loss,
https://github.com/hwei-hw/FocalLoss_Keras/issues/1, and the zero gradient a clip gives where
it binds, https://github.com/spragunr/deep_q_rl/issues/46. Sharp (large) logits make every
probability exactly 0 or 1 in float32: each is clipped, and the gradient is identically zero.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.clip_by_value({tf}.nn.softmax({name} * 1e4, axis=-1), 1e-7, 1.0 - 1e-7)"

    def twin_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.clip_by_value({tf}.nn.softmax({name}, axis=-1), 1e-7, 1.0 - 1e-7)"


class ClipSoftmax(Operator):
    name = "clip_softmax"
    codes = ("GC201",)
    summary = "clip_by_value(softmax(output * 1e4), 1e-7, 1 - 1e-7) inside the tape: saturated, clipped probabilities"
    twin_summary = "the same clip on softmax(output) (probabilities inside the clip)"
    effect = "zero"
    transformer = _T
