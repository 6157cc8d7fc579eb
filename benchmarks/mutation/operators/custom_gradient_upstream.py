"""GC112/GC301: a ``tf.custom_gradient`` on the path whose gradient ignores its upstream."""

from __future__ import annotations

from benchmarks.mutation.cstutil import parse_stmt
from benchmarks.mutation.operators._base import AfterForward, Operator

_HELPER = """
@{tf}.custom_gradient
def _gc_clip(x):
    def grad(upstream):
        return {grad}
    return {tf}.identity(x), grad
"""


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        self._helper(f"{self.ctx.tf}.ones_like(x)")  # the local derivative, not chained
        return f"{name} = _gc_clip({name})"

    def twin_line(self, name: str) -> str:
        self._helper(f"{self.ctx.tf}.clip_by_value(upstream, -1e6, 1e6)")  # chains the upstream
        return f"{name} = _gc_clip({name})"

    def _helper(self, grad: str) -> None:
        if not self.module_stmts:
            stmt = parse_stmt(_HELPER.format(tf=self.ctx.tf, grad=grad))
            self.module_stmts.append(stmt)
            grad = stmt.body.body[0]
            # equally good lines: the `return` of grad, and its `def` (where the real-world
            # reports' expectations, written blind, put a gradient that ignores its upstream)
            self.marked.extend([grad.body.body[0], grad])


class CustomGradientUpstream(Operator):
    name = "custom_gradient_upstream"
    codes = ("GC112", "GC301")
    summary = "output routed through a tf.custom_gradient identity whose grad returns ones_like(x)"
    twin_summary = "the same custom_gradient returning its clipped upstream"
    effect = "change"
    transformer = _T
