"""GC201 by cancellation: a tensor whose gradient is zero because the nonzero gradients of
two or more additive paths sum to zero."""

from __future__ import annotations

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.ops import ADDITIVE


def cancellation(a: Analysis, t, consumers) -> Cause | None:
    """Two or more paths whose own gradients are nonzero and sum to zero. Only paths
    entering additively count (their gradient does not depend on any value, so they
    cancel for every batch); two products of equal inputs cancel by chance."""
    if not all(a.flow.ops[c].type in ADDITIVE for c in consumers):
        return None
    contributions = [(c, _additive_vjp(a, c, t)) for c in consumers]
    nonzero = [c for c, g in contributions if g is not None and g.any()]
    if len(nonzero) < 2:
        return None
    lines = sorted({a.line_of(c) for c in nonzero})
    blame = max(nonzero)
    first = min(nonzero)
    reason = f"the gradients reaching this value through {a.call_text(first)} and {a.call_text(blame)} cancel exactly"
    notes = [f"each path alone carries a gradient ({' and '.join(lines)}); their sum is zero for every element"]
    if a.flow.ops[blame].type in ("Sub", "SquaredDifference") or a.flow.ops[first].type in ("AddV2", "Add"):
        notes.append(
            "a sample built from the parameters (`mean + std * eps`) compared again with the same "
            "parameters (`sample - mean` in its log-probability) is the classic case"
        )
    return Cause("GC201", "cancel", blame, blame, reason, notes)


def _additive_vjp(a: Analysis, c: int, t):
    """The gradient an additive op sends to its input ``t``: ±(its output's gradient),
    summed over the axes it broadcast ``t`` along."""
    op = a.flow.ops[c]
    g = a.output_grad(c)
    value = a.value(t)
    if g is None:
        return None
    sign = -1.0 if (op.type == "Neg" or (op.type == "Sub" and list(op.inputs).index(t) == 1)) else 1.0
    out = sign * g
    shape = value.shape if value is not None else out.shape
    while out.ndim > len(shape):
        out = out.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and out.shape[axis] != 1:
            out = out.sum(axis=axis, keepdims=True)
    return out
