"""A request that is the program's own check, not a training request: the gradient of a value
the program stopped itself (``tape.gradient(tf.stop_gradient(pred), ...)``, or of the ``target =
tf.stop_gradient(...)`` it built), asked to make sure no gradient flows through it. Its Nones are
what the program wants; a finding there (GC104 at the stop) would blame the check.

Only when the result is never applied: a loss stopped by mistake (``loss =
tf.stop_gradient(...)``) whose gradients go on to an optimizer update is still GC104."""

from __future__ import annotations

import ast

from gradcheck import sourcemap
from gradcheck.trace.diagnose.context import Context
from gradcheck.trace.diagnose.scopes import enclosing_scope, own_statements, statement_at

__all__ = ["deliberate_probe"]

_STOPS = frozenset({"StopGradient", "PreventGradient"})
_PASS = frozenset({"Identity", "IdentityN"})
#: calls that apply gradients (an optimizer's update, a manual step)
_APPLY = frozenset({"apply_gradients", "apply", "minimize", "assign_sub", "assign_add", "assign", "update_step"})


def deliberate_probe(ctx: Context) -> bool:
    """Every target of the request is exactly a stop's output, and the program never applies
    what it returned."""
    if not ctx.target_keys or not all(_stopped(ctx, k) for k in ctx.target_keys):
        return False
    return not _applied(ctx)


def _stopped(ctx: Context, key) -> bool:
    return ctx.flow.producer_through(key, _STOPS, _PASS, hops=4, data=False) is not None


def _applied(ctx: Context) -> bool:
    """Whether the request's result may reach an update: bound to names that a later call of
    the same scope applies (``apply_gradients(zip(grads, ...))``). Unknown (no user line with the
    ``.gradient(...)`` call) counts as applied."""
    call = ctx.call_location
    if call is None or sourcemap.call_arguments(call.path, call.line, call.column, "gradient") is None:
        return True
    scope = enclosing_scope(call.path, call.line)
    statement = statement_at(scope, call.line) if scope is not None else None
    if statement is None:
        return True
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return False  # used where it is asked (`assert tape.gradient(t, v)[0] is None`): not kept
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    for later in own_statements(scope):
        if later.lineno <= statement.lineno:
            continue
        for node in ast.walk(later):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _APPLY):
                continue
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(n, ast.Name) and n.id in names for a in arguments for n in ast.walk(a)):
                return True
        if isinstance(later, (ast.Assign, ast.AnnAssign)):  # rebound: the request's result is gone
            bound = later.targets if isinstance(later, ast.Assign) else [later.target]
            names -= {n.id for t in bound for n in ast.walk(t) if isinstance(n, ast.Name)}
            if not names:
                return False
    return False
