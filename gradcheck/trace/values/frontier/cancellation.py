"""GC201 by cancellation: a tensor whose gradient is zero because the nonzero gradients of
two or more additive paths sum to zero."""

from __future__ import annotations

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.ops import ADDITIVE


def cancellation(a: Analysis, t, consumers) -> Cause | None:
    """Two or more paths whose own gradients are nonzero and sum to zero. Only paths
    entering additively count (their gradient does not depend on any value, so they
    cancel for every batch), or paths that compute the same thing twice and subtract it
    (``identical``); two products of equal inputs cancel by chance."""
    if not all(a.flow.ops[c].type in ADDITIVE for c in consumers):
        return identical(a, t, consumers)
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


#: how far from the frontier the two computations are followed to where they are subtracted
_HOPS = 8


def identical(a: Analysis, t, consumers) -> Cause | None:
    """The value ``t`` is computed with twice, by the same ops from the same inputs, and the
    two results are subtracted (``log_prob - old_log_prob`` where both are the same call on
    the same logits): the difference is zero by construction, for every batch, and so is
    its gradient. Same computation: same op types, same other inputs and attributes (value
    numbering; an input whose value was not kept matches by position), and equal values on
    the batch. Pointed at the later of the two (the copy)."""
    flow = a.flow
    numbers: dict = {}

    def number(k, depth: int = 0):
        """A value number: equal numbers are the same computation of the same inputs."""
        if k in numbers:
            return numbers[k]
        p = flow.producer.get(k)
        if k == t or depth > _HOPS:
            numbers[k] = ("leaf", k)
        elif p is None or flow.ops[p].type == "Const":
            numbers[k] = _constant_number(a, k)
        else:
            op = flow.ops[p]
            attrs = tuple(sorted((name, repr(value)) for name, value in op.attrs.items()))
            numbers[k] = (op.type, attrs, op.outputs.index(k), tuple(number(i, depth + 1) for i in op.inputs))
        return numbers[k]

    seen: set[int] = set()
    stack = [(c, 0) for c in consumers]
    while stack:
        c, depth = stack.pop()
        if c in seen or depth > _HOPS:
            continue
        seen.add(c)
        op = flow.ops[c]
        if op.type in ("Sub", "SquaredDifference") and len(op.data) == 2 and op.data[0] != op.data[1]:
            left, right = op.data
            if number(left) == number(right) and _equal(a.value(left), a.value(right)):
                copy = max(flow.producer.get(left, -1), flow.producer.get(right, -1))
                blame = copy if copy >= 0 else c
                reason = (
                    f"{a.call_text(c)} subtracts the same computation from itself: both sides apply the same ops "
                    "to the same inputs, so the difference is zero for every batch and the gradients through "
                    "its two sides cancel"
                )
                location = _where_they_part(a, flow.producer.get(left, -1), flow.producer.get(right, -1))
                where = f"line {location.line}" if location is not None else a.line_of(blame)
                notes = [f"the second computation of it is at {where}"]
                return Cause("GC201", "identical", blame, c, reason, notes, location=location)
        for k in op.outputs:
            stack.extend((j, depth + 1) for j in flow.data_consumers.get(k, ()))
    return None


def _where_they_part(a: Analysis, first: int, second: int):
    """The user's line of the second computation, at the level where the two part: the second
    call of a helper that computes it (``old_log_prob = log_probability(...)``), not the
    helper's body that both share."""
    if first < 0 or second < 0:
        return None
    early, late = sorted((first, second))
    mine, theirs = a.ctx.op_frames(late), a.ctx.op_frames(early)
    for frame, other in zip(mine, theirs, strict=False):
        if (frame.path, frame.line) != (other.path, other.line):
            return a.ctx.frame_location(frame)
    return None


def _constant_number(a: Analysis, k):
    """A tensor brought in from the host is itself: two float batches equal on this batch
    are equal by chance (``embed(a) - embed(b)``). One whose value was not kept (integer
    labels a NumPy array gives each call anew) matches at the same position in both
    computations: the equal values of the two sides on the batch (``_equal``) decide."""
    if a.value(k) is not None or k in a.ctx.tensors:
        return ("leaf", k)
    return ("unknown input",)


def _equal(x, y) -> bool:
    """Equal on the batch, element for element, and more than one number (two scalars may
    agree by chance)."""
    return x is not None and y is not None and x.shape == y.shape and x.size > 1 and bool((x == y).all())
