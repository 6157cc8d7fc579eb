"""GC116: ``@tf.function`` put on a Keras model's ``call`` (Keras 3 captures variables by value)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted, is_graph_function
from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def __init__(self, *a, **k) -> None:
        super().__init__(*a, **k)
        self.classes: list[bool] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(any(dotted(b.value).endswith(("Model", "Layer")) for b in node.bases))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.classes.pop()
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.BaseStatement:
        updated = super().leave_FunctionDef(original, updated)
        if self.twin:
            # A plain custom-loop step (a module-level def with a tape) put under tf.function: correct.
            if self.classes or is_graph_function(original) or not _has_tape(original):
                return updated
        elif not (self.classes and self.classes[-1] and original.name.value == "call") or is_graph_function(original):
            return updated
        if not self.hit():
            return updated
        self.detail = f"@tf.function on {original.name.value}"
        dec = self.mark(cst.Decorator(decorator=cst.parse_expression(f"{self.ctx.tf}.function")))
        return updated.with_changes(decorators=[*updated.decorators, dec])


def _has_tape(node: cst.FunctionDef) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            if dotted(n.func).endswith("GradientTape"):
                found.append(n)

    node.visit(V())
    return bool(found)


class TfFunctionCall(Operator):
    name = "tf_function_call"
    codes = ("GC116",)
    summary = "@tf.function on a Keras Model/Layer subclass's call"
    twin_summary = "@tf.function on a custom-loop step function (module level)"
    transformer = _T
