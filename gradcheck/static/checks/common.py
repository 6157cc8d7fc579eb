"""What several static rules read about a request: the variables an attribute lists, the
function a line is in, the expression a name was last bound to, whether sources were filtered."""

from __future__ import annotations

import ast

from gradcheck.static import catalog
from gradcheck.static.program import Check, Program
from gradcheck.static.scope import PICKED

#: Attributes that list every variable of a model, the non-trainable ones included.
ALL_VARIABLES = frozenset(("variables", "weights", "non_trainable_variables", "non_trainable_weights"))


def function_at(program: Program, node: ast.AST) -> ast.AST | None:
    """The innermost function whose body holds ``node``'s line (None: the module)."""
    line = getattr(node, "lineno", 0)
    best = None
    for fn in program.owner:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if fn.lineno <= line <= (fn.end_lineno or fn.lineno) and (best is None or fn.lineno >= best.lineno):
            best = fn
    return best


def source_list(program: Program, request: ast.AST, name: str) -> ast.expr | None:
    """The expression last bound to ``name`` before ``request``, in the function that makes
    the request (or at module level, for a name that function neither binds nor takes)."""
    spans = [
        f
        for f in program.owner
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.lineno <= request.lineno <= (f.end_lineno or f.lineno)
    ]
    function = max(spans, key=lambda f: f.lineno, default=None)
    scopes: list[ast.AST] = [function] if function is not None else []
    if function is None or name not in _parameters(function):
        scopes.append(program.tree)
    for scope in scopes:
        bound = _last_binding(scope.body, name, request.lineno)
        if bound is not None:
            return bound
    return None


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    spec = fn.args
    return {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg) if a is not None}


def _last_binding(body: list[ast.stmt], name: str, before: int) -> ast.expr | None:
    """The value of the last ``name = value`` of this body (its nested blocks, not its nested
    functions) that starts before line ``before``."""
    found: ast.stmt | None = None
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if stmt.lineno >= before or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if (found is None or stmt.lineno > found.lineno) and any(
                isinstance(t, ast.Name) and t.id == name for t in targets
            ):
                found = stmt
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, None) or ())
        for handler in getattr(stmt, "handlers", None) or ():
            stack.extend(handler.body)
    return found.value if found is not None else None


def lists_all_variables(node: ast.expr) -> bool:
    """``model.variables``, ``[*a.weights, *b.weights]``, ``a.variables + b.variables``."""
    parts = [node]
    while parts:
        part = parts.pop()
        if isinstance(part, (ast.List, ast.Tuple)):
            parts.extend(part.elts)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            parts += [part.left, part.right]
        elif isinstance(part, ast.Starred):
            parts.append(part.value)
        elif not (isinstance(part, ast.Attribute) and part.attr in ALL_VARIABLES):
            return False
    return True


def asks_a_gradient(check: Check) -> bool:
    node = check.node
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in catalog.GRADIENT_METHODS
    )


def picked(check: Check) -> bool:
    """The sources are a list filtered at run time (``[v for v in vs if ...]``), as a whole
    or as one of the parts written (``shared + [v for v in head if ...]``)."""
    return check.sources.ref is PICKED or any(value.ref is PICKED for _, value in check.leaves or ())
