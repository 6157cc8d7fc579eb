"""``tf.custom_gradient`` functions of the file: what their gradient function visibly does.

The user defines the gradient, so such a function is differentiable as written, except
where the source makes the gradient certainly wrong: its gradient function never reads the
upstream gradient (``def grad(dy): return 1 - s``), so the vector-Jacobian product is wrong
whenever the upstream gradient is not one (GC301, reported at the gradient function, as the
trace engine's finite-difference check does). Not when the forward computation is a step
(rounding, a sign, a comparison: a straight-through estimator) or the gradient is zero or
constant by construction (a deliberate block).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from gradcheck.static.values import HOLDER

#: Calls in a forward function that make it a step (its custom gradient is a surrogate).
_STEPS = frozenset(
    (
        *("round", "floor", "ceil", "rint", "sign", "cast", "argmax", "argmin", "greater", "less", "equal"),
        *("greater_equal", "less_equal", "where", "stop_gradient", "quantize", "fake_quant_with_min_max_vars"),
        *("one_hot", "top_k", "sort", "clip_by_value", "relu", "abs", "maximum", "minimum"),
    )
)
#: Calls that make a zero or constant gradient on purpose (a block). A gradient of ones that
#: ignores ``dy`` is no block: it is the upstream gradient forgotten (unless the forward is a
#: step, where it is a straight-through surrogate: ``_STEPS``).
_ZEROS = frozenset(("zeros_like", "zeros", "constant", "identity"))


@dataclass(frozen=True)
class CustomGradient:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    ignores_upstream: ast.FunctionDef | None  # the gradient function that never reads it (GC301)
    #: the scope the forward function closes over (``interp.Scope``): what it reads from there
    #: (``kernel = self.kernel`` in a layer's ``call``) gets its gradient through ``variables``
    closure: object = field(default=None, compare=False)

    @property
    def ident(self) -> tuple:
        return ("custom_gradient", id(self.node), id(self.closure))

    @property
    def mark(self) -> str:
        """The pseudo-origin that marks values computed through its wrong gradient."""
        grad = self.ignores_upstream
        return f"{HOLDER}custom_gradient:{grad.lineno}:{grad.col_offset}" if grad is not None else ""


def analyse(fn: ast.FunctionDef | ast.AsyncFunctionDef, closure: object = None) -> CustomGradient:
    grad = _gradient_function(fn)
    if grad is None or grad.args.vararg is not None or grad.args.kwarg is not None:
        return CustomGradient(fn, None, closure)
    if any(p.arg == "variables" for p in (*grad.args.args, *grad.args.kwonlyargs)):
        return CustomGradient(fn, None, closure)  # gradients for variables too: not followed
    returns = [n.value for n in _own_nodes(grad) if isinstance(n, ast.Return)]
    return CustomGradient(fn, grad if _ignores_upstream(fn, grad, returns) else None, closure)


def _gradient_function(fn: ast.AST) -> ast.FunctionDef | None:
    """The function the forward returns second (``return y, grad``), defined in its body."""
    defs = {s.name: s for s in fn.body if isinstance(s, ast.FunctionDef)}
    found = None
    for node in _own_nodes(fn):
        if not isinstance(node, ast.Return):
            continue
        value = node.value
        if not (isinstance(value, ast.Tuple) and len(value.elts) == 2 and isinstance(value.elts[1], ast.Name)):
            return None
        grad = defs.get(value.elts[1].id)
        if grad is None or (found is not None and grad is not found):
            return None
        found = grad
    return found


def _ignores_upstream(fn: ast.AST, grad: ast.FunctionDef, returns: list[ast.AST | None]) -> bool:
    params = [*grad.args.posonlyargs, *grad.args.args]
    if not params or not returns:
        return False
    upstream = params[0].arg
    if any(isinstance(n, ast.Name) and n.id == upstream for n in ast.walk(grad)):
        return False
    for value in returns:
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return False  # no gradient at all: GC112's (the trace engine's)
        for node in ast.walk(value):
            if isinstance(node, ast.Call) and _leaf(node.func) in _ZEROS:
                return False
    return not any(isinstance(n, ast.Call) and _leaf(n.func) in _STEPS for n in ast.walk(fn))


def _own_nodes(fn: ast.AST):
    """The nodes of a function's body, not those of the functions nested in it."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack = [s for s in fn.body if not isinstance(s, nested)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def _leaf(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


__all__ = ["CustomGradient", "analyse"]
