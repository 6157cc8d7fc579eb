"""GC301: a ``tf.custom_gradient`` whose gradient is the derivative of a different function.

Report: a ReLU written with ``tf.custom_gradient`` whose ``grad`` returns ``dy`` (the derivative
of the identity, not of ReLU), https://github.com/tensorflow/tensorflow/issues/30883.
"""

from __future__ import annotations

from benchmarks.mutation.cstutil import parse_stmt
from benchmarks.mutation.operators._base import AfterForward, Operator

_HELPER = """
@{tf}.custom_gradient
def _gc_relu(x):
    def grad(upstream):
        return {grad}
    return {tf}.nn.relu(x), grad
"""


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        self._helper("upstream")  # the identity's derivative
        return f"{name} = _gc_relu({name})"

    def twin_line(self, name: str) -> str:
        self._helper(f"upstream * {self.ctx.tf}.cast(x > 0, upstream.dtype)")  # ReLU's own
        return f"{name} = _gc_relu({name})"

    def _helper(self, grad: str) -> None:
        if not self.module_stmts:
            stmt = parse_stmt(_HELPER.format(tf=self.ctx.tf, grad=grad))
            self.module_stmts.append(stmt)
            inner = stmt.body.body[0]
            # the wrong derivative is written at grad's `return` (its `def` is as good a line)
            self.marked.extend([inner.body.body[0], inner])


class CustomGradientDerivative(Operator):
    name = "custom_gradient_derivative"
    codes = ("GC301",)
    summary = "output routed through a tf.custom_gradient ReLU whose grad returns the upstream unmasked (identity's derivative)"
    twin_summary = "the same custom_gradient ReLU with its own derivative (upstream * (x > 0))"
    effect = "change"
    transformer = _T
