"""GC108: the gradient asked for another model's variables (``actor`` for ``critic``)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer, in_sources


class _T(SiteTransformer):
    def __init__(self, *a, **k) -> None:
        super().__init__(*a, **k)
        self.in_gradient = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.in_gradient += in_sources(self.ctx, node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        self.in_gradient -= in_sources(self.ctx, original)
        return updated

    def visit_Assign(self, node: cst.Assign) -> None:
        self.in_gradient += in_sources(self.ctx, node)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        self.in_gradient -= in_sources(self.ctx, original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if not self.in_gradient or original.attr.value not in {"trainable_variables", "trainable_weights"}:
            return updated
        owner = dotted(original.value)
        # `self.critic` for `self.actor` inside a class, `critic` for `actor` outside.
        is_self = owner.startswith("self.")
        others = [m for m in self.ctx.gradient_models if m != owner and m.startswith("self.") == is_self]
        if not owner:
            return updated
        if self.twin:  # the same list, spelt differently
            if not self.hit():
                return updated
            self.detail = f"list({owner}.{original.attr.value})"
            return self.mark(cst.parse_expression(f"list({owner}.{original.attr.value})"))
        for other in others:
            if self.hit():
                self.detail = f"{owner} -> {other}"
                return self.mark(cst.parse_expression(f"{other}.{original.attr.value}"))
        return updated


class WrongModelVars(Operator):
    name = "wrong_model_vars"
    codes = ("GC108",)
    summary = "tape.gradient(loss, other.trainable_variables): another model's variables"
    twin_summary = "list(model.trainable_variables)"
    needs_tf = False
    transformer = _T
