"""GC204: the epsilon removed from a log's argument (``log(p + 1e-7)`` -> ``log(p)``).

Reports: a softmax probability that reaches exactly 0 makes ``tf.log(pred)`` -inf and the
loss NaN, fixed by ``tf.log(pred + 1e-10)``,
https://github.com/aymericdamien/TensorFlow-Examples/issues/383 (also
https://github.com/mkocabas/focal-loss-keras/issues/17, where ``K.epsilon()`` in the log
fixed a NaN focal loss, and
https://github.com/maxvfischer/keras-image-segmentation-loss-functions/pull/1). The
mutant is valid only where TensorFlow shows the loss non-finite (an argument that is 0 or
below in the step run); elsewhere it is equivalent.
"""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer

#: Calls that take a natural log (TensorFlow, Keras 3 ops, the Keras 2 backend).
_LOG_ROOTS = ("tensorflow", "keras", "tf_keras")


def _small(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Float | cst.Integer):
        try:
            return 0 < float(node.value) <= 1e-3
        except ValueError:
            return False
    return isinstance(node, cst.Call) and dotted(node.func).endswith("epsilon") and not node.args


class _T(SiteTransformer):
    def _is_log(self, node: cst.Call) -> bool:
        name = dotted(node.func)
        if not name or name.split(".")[-1] != "log" or len(node.args) != 1:
            return False
        root = self.ctx.imports.get(name.split(".")[0], "")
        return root.split(".")[0] in _LOG_ROOTS

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self._is_log(original):
            return updated
        arg = updated.args[0].value
        if not isinstance(arg, cst.BinaryOperation) or not isinstance(arg.operator, cst.Add):
            return updated
        if _small(arg.right):
            keep, eps_right = arg.left, True
        elif _small(arg.left):
            keep, eps_right = arg.right, False
        else:
            return updated
        if not self.hit():
            return updated
        self.detail = f"the epsilon of {dotted(original.func)}(... + eps) removed"
        if self.twin:  # a larger guard is still a guard
            guarded = (
                arg.with_changes(right=cst.Float("1e-6")) if eps_right else arg.with_changes(left=cst.Float("1e-6"))
            )
            return self.mark(updated.with_changes(args=[updated.args[0].with_changes(value=guarded)]))
        return self.mark(updated.with_changes(args=[updated.args[0].with_changes(value=keep)]))


class RemoveLogEpsilon(Operator):
    name = "remove_log_epsilon"
    codes = ("GC204",)
    summary = "`log(p + eps)` -> `log(p)` (eps <= 1e-3 or `epsilon()`): a log of 0 makes the loss non-finite"
    twin_summary = "`log(p + 1e-6)` instead"
    effect = "nonfinite-loss"
    transformer = _T
