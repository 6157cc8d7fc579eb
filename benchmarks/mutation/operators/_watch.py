"""Shared: ``tape.watch(x)`` statements inside a tape."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import SiteTransformer


class WatchSites(SiteTransformer):
    def edit(self, stmt: cst.SimpleStatementLine, watched: str) -> cst.BaseStatement | cst.FlattenSentinel:
        raise NotImplementedError

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        call = original.body[0].value
        if not (isinstance(call, cst.Call) and dotted(call.func).endswith(".watch") and call.args):
            return updated
        watched = dotted(call.args[0].value)
        if not watched or not self.hit():
            return updated
        self.detail = f"watch({watched})"
        return self.edit(updated, watched)
