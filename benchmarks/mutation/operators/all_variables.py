"""GC115: ``model.variables`` (or ``weights``) instead of ``trainable_variables`` as sources."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer, in_sources

_SWAP = {"trainable_variables": "variables", "trainable_weights": "weights"}


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
        attr = original.attr.value
        if not self.in_gradient or attr not in _SWAP or not dotted(original.value):
            return updated
        if not self.hit():
            return updated
        owner = dotted(original.value)
        self.detail = f"{owner}.{_SWAP[attr]}"
        if self.twin:  # filtering by trainability is the correct spelling of the same list
            return self.mark(cst.parse_expression(f"[v for v in {owner}.{_SWAP[attr]} if v.trainable]"))
        return self.mark(updated.with_changes(attr=cst.Name(_SWAP[attr])))


class AllVariables(Operator):
    name = "all_variables"
    codes = ("GC115",)
    summary = "model.variables instead of model.trainable_variables in tape.gradient"
    twin_summary = "[v for v in model.variables if v.trainable]"
    needs_tf = False
    transformer = _T
