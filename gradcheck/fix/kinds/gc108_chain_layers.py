"""GC108, layers not chained: each layer of a ``call()`` applied to the raw input while the
result of the previous one is overwritten unread::

    h = self.fc1(inputs)        h = self.fc1(inputs)
    h = self.fc2(inputs)   ->   h = self.fc2(h)
    h = self.head(inputs)       h = self.head(h)

The engine's notes say which lines read the starved layers' variables without the result
reaching the loss; when those lines are such a run of assignments to one name, each call
after the first takes that name instead of the raw input. Any other unused variable (a
dropped loss term, an unused head, the wrong model's variables) has no mechanical fix.
"""

from __future__ import annotations

import re

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, arg, names_in

_READ_AT = re.compile(r" is read at line (\d+), but that result never reaches the loss")


@register("GC108")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    dead = sorted({int(m.group(1)) for note in finding.notes for m in [_READ_AT.search(note)] if m})
    if not dead:
        return []
    statements = []
    for line in dead:
        found = [s for s in source.statements_on_line(line) if _layer_step(s) is not None]
        if len(found) != 1:
            return []
        statements.append(found[0])
    block = source.parent(statements[0])
    if not isinstance(block, cst.IndentedBlock) or any(source.parent(s) is not block for s in statements):
        return []
    body = list(block.body)
    first = body.index(statements[0])
    name, raw = _layer_step(statements[0])
    run = [statements[0]]
    for stmt in body[first + 1 :]:
        step = _layer_step(stmt)
        if step is None or step[0] != name:
            break
        run.append(stmt)
        if stmt not in statements:
            break  # the first live one: it gets the chain too, and ends it
    if any(s not in run for s in statements) or len(run) < 2:
        return []
    if any(_layer_step(s)[1] != raw for s in run):
        return []  # not all on the same raw input: not this bug
    candidate = Candidate(
        finding, "chain-layers", f"chain the layers: each one takes `{name}`, the one before's output"
    )
    for stmt in run[1:]:
        call = stmt.body[0].value
        first_arg = arg(call, 0)
        candidate.replace(first_arg.value, cst.Name(name))
    return [candidate]


def _layer_step(stmt: cst.CSTNode) -> tuple[str, str] | None:
    """``h = self.layer(x, ...)``: (``h``, ``x``)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    call = assign.value
    if not isinstance(call, cst.Call):
        return None
    first = arg(call, 0)
    if first is None or not isinstance(first.value, cst.Name):
        return None
    name = assign.targets[0].target.value
    if name in names_in(call):
        return None  # already chained (h = layer(h))
    return name, first.value.value
