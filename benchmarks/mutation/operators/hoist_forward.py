"""GC109: the tape's first forward statement moved above the ``with`` line."""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel:
        is_tape = bool(self.tapes) and original.items is not None and self._is_innermost_tape(original)
        result = super().leave_With(original, updated)
        if not is_tape or not isinstance(updated.body, cst.IndentedBlock):
            return result
        body = list(updated.body.body)
        first = body[0] if body else None
        if not (
            isinstance(first, cst.SimpleStatementLine)
            and len(first.body) == 1
            and isinstance(first.body[0], cst.Assign)
            and self.is_forward_call(first.body[0].value)
        ):
            return result
        if not self.hit():
            return result
        parts = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        idx = next(i for i, n in enumerate(parts) if isinstance(n, cst.With))
        with_node = parts[idx]
        if self.twin:  # an extra forward pass before the tape (its result unused); the taped one stays
            copy = first.with_changes(
                body=[first.body[0].with_changes(targets=[cst.AssignTarget(cst.Name("_warmup"))])]
            )
            parts.insert(idx, self.mark(copy))
        else:
            rest = body[1:] or [cst.SimpleStatementLine([cst.Pass()])]
            parts[idx] = with_node.with_changes(body=with_node.body.with_changes(body=rest))
            parts.insert(idx, self.mark(first.with_changes(leading_lines=[])))
        self.detail = "moved above the tape"
        return cst.FlattenSentinel(parts)

    def _is_innermost_tape(self, node: cst.With) -> bool:
        from benchmarks.mutation.cstutil import is_tape_with

        return bool(is_tape_with(node))


class HoistForward(Operator):
    name = "hoist_forward"
    codes = ("GC109",)
    summary = "the first forward statement of a tape moved above its `with`"
    twin_summary = "an extra, unused forward pass before the tape"
    transformer = _T
    needs_tf = False
