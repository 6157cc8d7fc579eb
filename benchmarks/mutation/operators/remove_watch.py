"""GC110: ``tape.watch(x)`` removed, so a plain tensor is asked for without being watched."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import is_tape_with
from benchmarks.mutation.operators._base import Operator
from benchmarks.mutation.operators._watch import WatchSites


class _T(WatchSites):
    #: the removed watch waits for its tape's ``with``: the watch belongs in that block, and a
    #: finding there (the trace engine's place for a tensor made before the tape) is right too
    _open: bool = False

    def edit(self, stmt: cst.SimpleStatementLine, watched: str) -> cst.BaseStatement | cst.FlattenSentinel:
        if self.twin:  # watched twice: harmless
            return cst.FlattenSentinel([stmt, self.mark(stmt.with_changes(leading_lines=[]))])
        self._open = True
        return self.mark(stmt.with_changes(body=[cst.Pass()]))

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel:
        if self._open and is_tape_with(original):
            self._open = False
            updated = self.mark(updated)
        return super().leave_With(original, updated)


class RemoveWatch(Operator):
    name = "remove_watch"
    codes = ("GC110",)
    summary = "tape.watch(x) replaced by `pass`"
    twin_summary = "tape.watch(x) called twice"
    needs_tf = False
    transformer = _T
