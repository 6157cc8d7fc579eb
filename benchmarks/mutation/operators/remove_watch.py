"""GC110: ``tape.watch(x)`` removed, so a plain tensor is asked for without being watched."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator
from benchmarks.mutation.operators._watch import WatchSites


class _T(WatchSites):
    def edit(self, stmt: cst.SimpleStatementLine, watched: str) -> cst.BaseStatement | cst.FlattenSentinel:
        if self.twin:  # watched twice: harmless
            return cst.FlattenSentinel([stmt, self.mark(stmt.with_changes(leading_lines=[]))])
        return self.mark(stmt.with_changes(body=[cst.Pass()]))


class RemoveWatch(Operator):
    name = "remove_watch"
    codes = ("GC110",)
    summary = "tape.watch(x) replaced by `pass`"
    twin_summary = "tape.watch(x) called twice"
    needs_tf = False
    transformer = _T
