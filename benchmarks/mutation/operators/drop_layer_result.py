"""GC108: a layer call dropped from a chain (``x = self.layer(x)`` -> its result unused)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def __init__(self, *a, **k) -> None:
        super().__init__(*a, **k)
        self.in_call: list[bool] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self.in_call.append(node.name.value in {"call", "__call__", "forward"})

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.BaseStatement:
        self.in_call.pop()
        return super().leave_FunctionDef(original, updated)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement:
        if not (self.in_call and self.in_call[-1]) or len(original.body) != 1:
            return updated
        a = original.body[0]
        if not (isinstance(a, cst.Assign) and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)):
            return updated
        name = a.targets[0].target.value
        call = a.value
        if not (isinstance(call, cst.Call) and call.args and dotted(call.args[0].value) == name):
            return updated
        callee = dotted(call.func)
        if not callee.startswith("self.") or callee.count(".") != 1:  # a layer attribute of the model
            return updated
        if not self.hit():
            return updated
        new_name = f"{name}_{callee.split('.')[1]}"
        self.detail = f"{name} = {callee}({name}) -> {new_name} = ..."
        if self.twin:  # renamed, but chained on: `y = self.l(x); x = y`
            first = updated.with_changes(body=[a.with_changes(targets=[cst.AssignTarget(cst.Name(new_name))])])
            return cst.FlattenSentinel([self.mark(first), self.stmt(f"{name} = {new_name}")])
        return self.mark(updated.with_changes(body=[a.with_changes(targets=[cst.AssignTarget(cst.Name(new_name))])]))


class DropLayerResult(Operator):
    name = "drop_layer_result"
    codes = ("GC108",)
    summary = "in a call(): the result of one layer of the chain bound to a new name and never used"
    twin_summary = "the same renaming, chained on"
    needs_tf = False
    transformer = _T
