"""GC108: one term of a summed loss dropped (``loss = a + b`` -> ``loss = a``)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator, SiteTransformer


def _has_call(node: cst.CSTNode) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            found.append(n)

        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(V())
    return bool(found)


class _T(SiteTransformer):
    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        v = original.value
        if not (self.in_tape or self.in_graph) or not isinstance(v, cst.BinaryOperation):
            return updated
        if not isinstance(v.operator, cst.Add) or not (_has_call(v.left) and _has_call(v.right)):
            return updated
        if isinstance(v.right, cst.Integer | cst.Float):
            return updated
        names = [t.target.value for t in original.targets if isinstance(t.target, cst.Name)]
        if not any("loss" in n.lower() or n in {"total", "cost", "objective"} for n in names):
            return updated
        if not self.hit():
            return updated
        self.detail = f"{names[0]}: right term dropped"
        if self.twin:  # the terms swapped
            m = cst.Module([])
            swapped = cst.parse_expression(f"({m.code_for_node(v.right)}) + ({m.code_for_node(v.left)})")
            return self.mark(updated.with_changes(value=swapped))
        left = v.left
        return self.mark(updated.with_changes(value=left))


class DropLossTerm(Operator):
    name = "drop_loss_term"
    codes = ("GC108",)
    summary = "the last term of `loss = a + b` dropped"
    twin_summary = "the terms swapped: `loss = (b) + (a)`"
    needs_tf = False
    transformer = _T
