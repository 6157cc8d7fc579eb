"""GC114: the tensor a tape watches is an integer tensor (ids, pixel values before the cast)."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator
from benchmarks.mutation.operators._watch import WatchSites


class _T(WatchSites):
    def edit(self, stmt: cst.SimpleStatementLine, watched: str) -> cst.BaseStatement | cst.FlattenSentinel:
        tf = self.ctx.tf
        dtype = "float32" if self.twin else "int32"  # the twin casts to the float it already is
        cast = cst.parse_statement(f"{watched} = {tf}.cast({watched}, {tf}.{dtype})")
        cast = self.mark(cast.with_changes(leading_lines=stmt.leading_lines))
        return cst.FlattenSentinel([cast, self.mark(stmt.with_changes(leading_lines=[]))])


class WatchInt(Operator):
    name = "watch_int"
    codes = ("GC114",)
    summary = "x = tf.cast(x, tf.int32) just before tape.watch(x)"
    twin_summary = "x = tf.cast(x, tf.float32) just before tape.watch(x)"
    transformer = _T
