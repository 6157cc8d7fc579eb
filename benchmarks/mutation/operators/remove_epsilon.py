"""GC202: the epsilon removed from a ``sqrt`` / ``log`` / division guard (``x + 1e-8`` -> ``x``)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator, SiteTransformer


def _small(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Float | cst.Integer):
        try:
            v = float(node.value)
        except ValueError:
            return False
        return 0 < v <= 1e-3
    return False


class _T(SiteTransformer):
    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(original.operator, cst.Add):
            return updated
        eps, keep = (updated.right, updated.left) if _small(original.right) else (updated.left, updated.right)
        if not _small(eps) or not self.hit():
            return updated
        self.detail = f"+ {eps.value} removed"
        if self.twin:  # a larger guard is still a guard
            return self.mark(
                updated.with_changes(right=cst.Float("1e-6"))
                if eps is updated.right
                else updated.with_changes(left=cst.Float("1e-6"))
            )
        return self.mark(keep.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))


class RemoveEpsilon(Operator):
    name = "remove_epsilon"
    codes = ("GC202",)
    summary = "`x + eps` (eps <= 1e-3) -> `(x)` anywhere in the program"
    twin_summary = "`x + 1e-6` instead"
    effect = "nonfinite"
    needs_tf = False
    transformer = _T
