"""GC110: a plain tensor asked for as a gradient source that the tape never watched.
``tape.watch(x)`` is added as the first statement of the ``with`` block of the tape whose
``gradient`` asks for ``x`` (after the statement that makes ``x``, when the block makes it)."""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import statement
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, arg, bound_names, callee_tail, names_in, tape_items


@register("GC110")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    if len(finding.variables) != 1 or not finding.variables[0].isidentifier():
        return []
    name = finding.variables[0]
    for call in source.walk(source.module, (cst.Call,)):
        if callee_tail(call) != "gradient" or not isinstance(call.func, cst.Attribute):
            continue
        sources = arg(call, 1, "sources")
        if sources is None or name not in names_in(sources.value):
            continue
        receiver = call.func.value
        if not isinstance(receiver, cst.Name):
            continue
        block = _tape_block(source, call, receiver.value)
        if block is None:
            continue
        body = list(block.body.body)
        if not body:
            continue
        anchor, where = body[0], "before"
        for stmt in body:
            if name in bound_names(stmt):
                anchor, where = stmt, "after"
                break
        candidate = Candidate(finding, "tape-watch", f"watch `{name}` on `{receiver.value}`")
        watch = statement(f"{receiver.value}.watch({name})")
        if where == "before":
            candidate.insert_before(anchor, watch)
        else:
            candidate.insert_after(anchor, watch)
        return [candidate]
    return []


def _tape_block(source: Source, call: cst.Call, tape: str) -> cst.With | None:
    """The ``with ... as tape`` that records for ``call``: around it, or the last one
    before it in the same function."""
    scope = source.function(call)
    line = source.line_of(call)
    best = None
    for node in source.walk(scope or source.module, (cst.With,)):
        if source.function(node) is not scope or source.line_of(node) > line:
            continue
        if any(bound == tape for _, bound in tape_items(node)):
            best = node
    return best
