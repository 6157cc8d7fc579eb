"""GC203: ``tf.stop_gradient`` removed from a target (TD target, baseline, advantage)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not dotted(original.func).endswith("stop_gradient") or len(original.args) != 1:
            return updated
        if not self.in_tape:
            # a value stopped before the tape records was never on it: removing the stop is
            # an equivalent mutant whatever the value is (a NumPy target, a previous policy)
            return updated
        if not self.hit():
            return updated
        inner = updated.args[0].value
        self.detail = "stop_gradient removed"
        if self.twin:  # still stopped, spelt with an identity inside
            return self.mark(
                updated.with_changes(
                    args=[
                        updated.args[0].with_changes(
                            value=cst.parse_expression(f"{self.ctx.tf}.identity(x)").with_changes(args=[cst.Arg(inner)])
                        )
                    ]
                )
            )
        return self.mark(inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))


class RemoveStopGradient(Operator):
    name = "remove_stop_gradient"
    codes = ("GC203",)
    summary = "tf.stop_gradient(target) -> (target)"
    twin_summary = "tf.stop_gradient(tf.identity(target))"
    effect = "change"
    live_stop = True
    transformer = _T
