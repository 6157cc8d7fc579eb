"""GC105: ``model(x)`` replaced by ``model.predict(x)`` inside the tape."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import dotted
from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        call = original.value
        if not self.in_tape or not self.is_forward_call(call) or isinstance(call.func, cst.Call):
            return updated
        if self.twin and self.in_graph:
            return updated
        if any("loss" in dotted(t.target).lower() for t in original.targets):
            return updated
        if not call.args or call.args[0].keyword is not None:
            return updated
        if not self.hit():
            return updated
        predict = cst.parse_expression(f"{dotted(call.func)}.predict(x, verbose=0)")
        predict = predict.with_changes(
            args=[call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT), predict.args[1]]
        )
        self.detail = f"{dotted(call.func)}.predict"
        if self.twin:  # predict for a preview, before the tape, and the real call kept
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name("_preview"))], predict)])
            self.before_with[-1].append(self.mark(line))
            return updated
        return updated.with_changes(value=self.mark(predict))


class PredictInTape(Operator):
    name = "predict_in_tape"
    codes = ("GC105",)
    summary = "model.predict(x) instead of model(x) inside the tape"
    twin_summary = "model.predict(x) before the tape for a preview (eager code only)"
    crash_ok = True
    needs_tf = False
    transformer = _T
