"""GC108 for a loss term left out: where the user changes the program when a value made from
the starved variables is left unused.

A dead end is the line that made the last value from them (``_dead_end_location``). For a layer's
result dropped from a chain (``h2 = self.block(h)``, then ``self.head(h)``) that is the line to
change: the value is an activation the next layer should take. For a loss *term* (a penalty, a
distillation loss, an auxiliary head's loss) the value is a reduced scalar, and the line to
change is the loss expression that should sum it: ``loss = main_loss`` after ``aux_loss = ...``.
The two are told apart from the program as it is: the dead value is a float scalar bound to a
name, and a later statement of the same function defines the loss (the target of the function's
own ``tape.gradient`` call, or the value it returns, as ``compute_loss`` does), a scalar on the
target's path. Anything else keeps the dead end."""

from __future__ import annotations

import ast

from gradcheck import sourcemap
from gradcheck.trace.diagnose.context import Context
from gradcheck.trace.diagnose.scopes import enclosing_scope, own_statements, span, statement_at
from gradcheck.trace.record.frames import Location

__all__ = ["another_requests_target", "loss_definition", "loss_statement"]

#: how many plain aliases (``loss = total``) are followed back to the statement that computes
_ALIASES = 4


def loss_statement(ctx: Context, sink: int, dead_end: Location) -> Location | None:
    """The statement that defines the loss and leaves out the scalar term made at ``dead_end``
    (the op ``sink``), when that is where the user changes the program; None otherwise."""
    if not _scalar_output(ctx, sink) or sourcemap.bound_name(dead_end.path, dead_end.line) is None:
        return None
    function = enclosing_scope(dead_end.path, dead_end.line)
    if function is None:
        return None
    cone = ctx.flow.backward_cone(ctx.target_keys)
    lines = _lines_on_path(ctx, cone, dead_end.path, function)
    if not lines:
        return None
    for node in _loss_names(ctx, dead_end.path, function):
        statement = _binding(function, node, dead_end.line)
        if statement is None:
            continue
        if _computes_on_path(function, statement, lines):
            return _statement_location(dead_end.path, statement)
    return None


def loss_definition(ctx: Context) -> Location | None:
    """The statement of the gradient call's own scope that defines its target (``gen_loss =
    ...`` for ``gen_tape.gradient(gen_loss, ...)``); None when the target is not bound there."""
    call = ctx.call_location
    scope = enclosing_scope(call.path, call.line) if call is not None else None
    if scope is None:
        return None
    for node in _loss_names(ctx, call.path, scope):
        statement = _binding(scope, node, 0)
        if statement is not None and statement.lineno < call.line:
            return _statement_location(call.path, statement)
    return None


def another_requests_target(ctx: Context, dead_end: Location) -> bool:
    """The value bound at ``dead_end`` is (through plain aliases, ``disc_loss = divergence``) the
    target of another ``.gradient(...)`` call of the same scope than ``ctx``'s."""
    scope = enclosing_scope(dead_end.path, dead_end.line)
    statement = statement_at(scope, dead_end.line) if scope is not None else None
    if statement is None or not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return False
    statements = own_statements(scope)
    names = _assigned_names(statement)
    for later in statements:  # aliases, in order
        value = getattr(later, "value", None)
        if later.lineno > statement.lineno and isinstance(value, ast.Name) and value.id in names:
            names |= _assigned_names(later)
    call = ctx.call_location
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "gradient"):
            continue
        if (call is not None and node.lineno == call.line) or not node.args:
            continue
        if isinstance(node.args[0], ast.Name) and node.args[0].id in names:
            return True
    return False


def _statement_location(path: str, statement: ast.stmt) -> Location:
    return Location(
        path, statement.lineno, statement.col_offset + 1, statement.end_lineno, (statement.end_col_offset or 0) + 1
    )


def _scalar_output(ctx: Context, op_index: int) -> bool:
    """The op made a float scalar (a reduced loss term), not a batch of activations."""
    for key in ctx.flow.ops[op_index].outputs:
        tensor = ctx.tensors.get(key)
        shape = getattr(tensor, "shape", None)
        dtype = getattr(tensor, "dtype", None)
        if shape is None or dtype is None or not getattr(dtype, "is_floating", False):
            continue
        if shape.rank == 0:
            return True
    return False


def _lines_on_path(ctx: Context, cone: set[int], path: str, function) -> set[int]:
    """Lines of ``function`` holding an op on the target's path that makes a float scalar (a
    loss, not a model's output)."""
    first, last = span(function)
    out = set()
    for i in cone:
        if not _scalar_output(ctx, i):
            continue
        for frame in ctx.op_frames(i):
            if frame.path == path and first <= frame.line <= last:
                out.add(frame.line)
    return out


def _loss_names(ctx: Context, path: str, function) -> list[ast.expr]:
    """The expressions that are the loss in ``function``: the target of its own gradient call,
    else what it returns (a ``compute_loss``)."""
    call = ctx.call_location
    first, last = span(function)
    if call is not None and call.path == path and first <= call.line <= last:
        args = sourcemap.call_arguments(call.path, call.line, call.column, "gradient")
        return args[:1] if args else []
    if isinstance(function, ast.Module):
        return []
    returns = [s.value for s in own_statements(function) if isinstance(s, ast.Return) and s.value is not None]
    return returns[-1:]


def _binding(function, node: ast.expr, after: int) -> ast.stmt | None:
    """The statement of ``function`` that defines ``node``'s value, after line ``after``: a
    name's last assignment before it is read, else the statement holding the expression."""
    statements = own_statements(function)
    if isinstance(node, ast.Name):
        held = [
            s
            for s in statements
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and s.lineno < node.lineno
            and node.id in _assigned_names(s)
        ]
    else:
        held = [s for s in statements if s.lineno <= node.lineno <= (s.end_lineno or s.lineno)]
    found = max(held, key=lambda s: s.lineno, default=None)
    return found if found is not None and found.lineno > after else None


def _assigned_names(statement: ast.stmt) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _computes_on_path(function, statement: ast.stmt, lines: set[int], hops: int = _ALIASES) -> bool:
    """The statement computes a value on the target's path, itself or through plain aliases
    (``loss = main_loss``: its value is ``main_loss``'s)."""
    span = range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)
    if any(line in lines for line in span):
        return True
    value = getattr(statement, "value", None)
    if hops <= 0 or not isinstance(value, ast.Name):
        return False
    previous = [
        s
        for s in own_statements(function)
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.lineno < statement.lineno and value.id in _assigned_names(s)
    ]
    earlier = max(previous, key=lambda s: s.lineno, default=None)
    return earlier is not None and _computes_on_path(function, earlier, lines, hops - 1)
