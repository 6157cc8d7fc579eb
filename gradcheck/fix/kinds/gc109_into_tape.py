"""GC109: part of the path to the loss ran while the tape was not recording.

- *Before*: the forward pass (with everything between it and the tape) moves into the
  ``with tf.GradientTape() as tape:`` block that follows it, after the block's leading
  ``tape.watch(...)`` calls; a tape then asked for gradients more than once becomes
  ``persistent=True``. The statements move whole (a loop that collects an episode moves
  with its body), so their order is kept.
- *After*, in the ``tape.gradient`` call (``tape.gradient(-loss, ...)``): the expression
  is computed at the end of the tape's block, ``objective = -loss``, and the gradient
  asked of ``objective``. After, in statements following the block: they move to the end
  of the block.

A value computed once in a layer's ``build()`` (the ``build`` variant) and a tape opened in
another function than the forward pass have no mechanical fix.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import append_arg, statement
from gradcheck.fix.patch import Candidate, Pass
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, Unpatchable, arg, bound_names, callee_tail, names_in, tape_items

_NOT_MOVED = (cst.FunctionDef, cst.ClassDef)


@register("GC109")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    nodes = source.nodes_at(Span.of(finding))
    if not nodes:
        return []
    node = nodes[0]
    if finding.fields.get("variant") == "build":
        return []
    gradient_call = _gradient_call_around(source, node)
    if gradient_call is None and isinstance(node, cst.Call) and callee_tail(node) == "gradient":
        target = arg(node, 0, "target")
        if target is not None and not isinstance(target.value, cst.Name):
            gradient_call = node  # the whole call is named: its target is what ran after
    if gradient_call is not None:
        return _objective_in_tape(source, finding, node, gradient_call)
    stmt = source.statement(node)
    if finding.fields.get("when") != "after":
        moved = _before_tape(source, finding, stmt) or _into_loss_callable(source, finding, stmt)
        if moved:
            return moved
    return _after_tape(source, finding, stmt)


def _into_loss_callable(source: Source, finding: Finding, stmt: cst.CSTNode) -> list[Candidate]:
    """``cost = f(w)`` then ``optimizer.minimize(lambda: cost, ...)``: the loss callable is
    what the optimizer's tape records, so the computation goes into it
    (``lambda: f(w)``), and the precomputed ``cost`` goes when nothing else reads it."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return []
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return []
    name = assign.targets[0].target.value
    scope = source.function(stmt) or source.module
    line = source.line_of(stmt)
    lambdas, other_reads = [], 0
    for node in source.walk(scope, (cst.Name,)):
        if node.value != name or source.line_of(node) <= line or source.function(node) is not source.function(stmt):
            continue
        parent = source.parent(node)
        if isinstance(parent, cst.Lambda) and parent.body is node and not parent.params.params:
            lambdas.append(parent)
        else:
            other_reads += 1
    if not lambdas:
        return []
    value = source.code(assign.value).strip()
    candidate = Candidate(finding, "into-loss-callable", f"compute `{name}` inside the loss callable")
    for lam in lambdas:
        candidate.replace(lam.body, cst.parse_expression(value))
    if not other_reads:
        candidate.edit(stmt, lambda _updated, _pass: cst.RemovalSentinel.REMOVE)
    return [candidate]


def _gradient_call_around(source: Source, node: cst.CSTNode) -> cst.Call | None:
    for up in source.ancestors(node):
        if isinstance(up, cst.Call) and callee_tail(up) == "gradient" and isinstance(up.func, cst.Attribute):
            target = arg(up, 0, "target")
            if target is not None and source.contains(target.value, node):
                return up
        if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return None
    return None


def _objective_in_tape(source: Source, finding: Finding, node: cst.CSTNode, call: cst.Call) -> list[Candidate]:
    target = arg(call, 0, "target")
    assert target is not None
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(receiver, cst.Name):
        return []
    tape = _with_binding(source, call, receiver.value)
    if tape is None or not tape.body.body:
        return []
    name = source.fresh("objective")
    candidate = Candidate(
        finding,
        "into-tape-objective",
        f"compute `{source.code(target.value).strip()}` inside the tape and ask the gradient of `{name}`",
    )
    candidate.insert_after(tape.body.body[-1], statement(f"{name} = {source.code(target.value).strip()}"))
    candidate.replace(target.value, cst.Name(name))
    return [candidate]


def _with_binding(source: Source, node: cst.CSTNode, tape: str) -> cst.With | None:
    scope = source.function(node)
    line = source.line_of(node)
    best = None
    for w in source.walk(scope or source.module, (cst.With,)):
        if source.function(w) is scope and source.line_of(w) <= line and any(n == tape for _, n in tape_items(w)):
            best = w
    return best


def _before_tape(source: Source, finding: Finding, stmt: cst.CSTNode) -> list[Candidate]:
    """Move ``stmt`` (or the statement holding it in an outer block) and what follows it
    into the next ``with GradientTape`` of the same block."""
    current = stmt
    while True:
        try:
            block, index = source.block(current)
        except Unpatchable:
            return []
        body = list(block.body)
        tape_at = next((i for i in range(index + 1, len(body)) if _is_tape_with(body[i])), None)
        if tape_at is not None:
            break
        owner = source.parent(block)
        if owner is None or isinstance(owner, (cst.Module, *_NOT_MOVED)) or isinstance(block, cst.Module):
            return []
        current = owner
    moved = body[index:tape_at]
    if any(isinstance(m, _NOT_MOVED) or _imports(m) for m in moved):
        return []
    tape = body[tape_at]
    assert isinstance(tape, cst.With)
    names = set().union(*(bound_names(m) for m in moved))
    first = _first_after_watches(tape, names)
    candidate = Candidate(
        finding,
        "into-tape-move",
        "move the forward pass into the `with tf.GradientTape()` block"
        + (f" (with the {len(moved) - 1} statement{'s' if len(moved) > 2 else ''} after it)" if len(moved) > 1 else ""),
    )
    stash: dict[int, list[cst.CSTNode]] = {}

    def take(m: cst.CSTNode):
        def rewrite(updated: cst.CSTNode, _pass: Pass):
            stash[id(m)] = [updated]
            return cst.RemovalSentinel.REMOVE

        return rewrite

    for m in moved:
        candidate.edit(m, take(m))

    def fill(updated: cst.CSTNode, _pass: Pass) -> cst.CSTNode:
        assert isinstance(updated, cst.IndentedBlock)
        new_body = list(updated.body)
        moved_now = [n for m in moved for n in stash.get(id(m), [m])]
        moved_now = [_reindent(n) for n in moved_now]
        if moved_now:
            moved_now[0] = moved_now[0].with_changes(leading_lines=_trim_blank(moved_now[0].leading_lines))
        return updated.with_changes(body=[*new_body[:first], *moved_now, *new_body[first:]])

    candidate.edit(tape.body, fill)
    blank = [line for line in getattr(moved[0], "leading_lines", ()) if line.comment is None]
    if blank and not tape.leading_lines:  # the blank lines above the moved code now come before the tape
        candidate.edit(
            tape, lambda updated, _pass: updated.with_changes(leading_lines=[*blank, *updated.leading_lines])
        )
    _persistent_if_reused(source, candidate, tape)
    return [candidate]


def _reindent(node: cst.CSTNode) -> cst.CSTNode:
    """Blank lines above a statement that moves one block deeper stay blank (no indent)."""
    lines = getattr(node, "leading_lines", None)
    if not lines:
        return node
    return node.with_changes(
        leading_lines=[line.with_changes(indent=False) if line.comment is None else line for line in lines]
    )


def _trim_blank(lines) -> list:
    """Leading blank lines go; comments stay."""
    return [line for line in lines if line.comment is not None]


def _imports(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in node.body)
    return False


def _is_tape_with(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.With) and bool(tape_items(node))


def _first_after_watches(tape: cst.With, moved_names: set[str]) -> int:
    """Where moved statements go: after the block's leading ``tape.watch(x)`` calls, unless
    a watch reads what the moved statements make."""
    body = list(tape.body.body)
    tapes = {name for _, name in tape_items(tape)}
    i = 0
    while i < len(body):
        stmt = body[i]
        if not (
            isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
        ):
            break
        call = stmt.body[0].value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "watch"
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value in tapes
        ):
            break
        if names_in(call) & moved_names:
            break
        i += 1
    return i


def _persistent_if_reused(source: Source, candidate: Candidate, tape: cst.With) -> None:
    """A tape asked for gradients twice must be persistent."""
    for item, name in tape_items(tape):
        scope = source.function(tape) or source.module
        uses = [
            c
            for c in source.walk(scope, (cst.Call,))
            if callee_tail(c) == "gradient"
            and isinstance(c.func, cst.Attribute)
            and isinstance(c.func.value, cst.Name)
            and c.func.value.value == name
            and source.line_of(c) >= source.line_of(tape)
        ]
        call = item.item
        assert isinstance(call, cst.Call)
        if len(uses) > 1 and arg(call, 0, "persistent") is None:
            candidate.edit(call, _add_persistent)


def _add_persistent(updated: cst.CSTNode, _pass: Pass) -> cst.CSTNode:
    assert isinstance(updated, cst.Call)
    new = cst.Arg(
        keyword=cst.Name("persistent"),
        value=cst.Name("True"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return updated.with_changes(args=append_arg(list(updated.args), new))


def _after_tape(source: Source, finding: Finding, stmt: cst.CSTNode) -> list[Candidate]:
    """``stmt`` follows the tape's block in the same block: move it (and what lies
    between) to the end of the tape's block."""
    if finding.fields.get("when") == "before":
        return []
    try:
        block, index = source.block(stmt)
    except Unpatchable:
        return []
    body = list(block.body)
    tape_at = next((i for i in range(index - 1, -1, -1) if _is_tape_with(body[i])), None)
    if tape_at is None:
        return []
    moved = body[tape_at + 1 : index + 1]
    if any(isinstance(m, _NOT_MOVED) or _imports(m) for m in moved):
        return []
    if any(_asks_gradient(m) for m in moved):
        return []
    tape = body[tape_at]
    assert isinstance(tape, cst.With)
    candidate = Candidate(finding, "into-tape-move-after", "compute it inside the `with tf.GradientTape()` block")
    for m in moved:
        candidate.edit(m, lambda _updated, _pass: cst.RemovalSentinel.REMOVE)

    # the tape's block comes before the moved statements: they move as they were written
    def fill(updated: cst.CSTNode, _pass: Pass) -> cst.CSTNode:
        assert isinstance(updated, cst.IndentedBlock)
        added = [_reindent(m) for m in moved]
        added[0] = added[0].with_changes(leading_lines=_trim_blank(added[0].leading_lines))
        return updated.with_changes(body=[*updated.body, *added])

    candidate.edit(tape.body, fill)
    return [candidate]


def _asks_gradient(node: cst.CSTNode) -> bool:
    found = False

    class _V(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            nonlocal found
            if callee_tail(c) == "gradient":
                found = True

    node.visit(_V())
    return found
