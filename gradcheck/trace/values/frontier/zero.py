"""The GC201 pass: the frontiers of a zero gradient, and why each is zero.

A frontier is a tensor whose gradient is identically zero while an op consuming it has a
nonzero output gradient. A tensor at the frontier of two or more additive paths may be a
cancellation (``cancellation``); otherwise each consumer is explained by its kind, in the
order of ``explain``: the first kind that matches decides the cause."""

from __future__ import annotations

from gradcheck.trace.record.dataflow import TAG_FUNCTION
from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.cancellation import cancellation
from gradcheck.trace.values.frontier.inside import inside_function
from gradcheck.trace.values.frontier.loops import loop
from gradcheck.trace.values.frontier.masks import masked
from gradcheck.trace.values.frontier.ops import CLIPS, LIST_OPS_PREFIX, LOOPS, PRODUCTS, SQUASH, ZERO_GRADIENT
from gradcheck.trace.values.frontier.relu import dead_relu
from gradcheck.trace.values.frontier.saturation import clipped, saturated
from gradcheck.trace.values.frontier.step import steps_behind, zero_derivative
from gradcheck.trace.values.frontier.zero_values import zero_factor, zero_value

#: ops that pass their output's gradient to one of their inputs, chosen by value
_SELECTIONS = frozenset({"Minimum", "Maximum", "Select", "SelectV2"})


def causes(a: Analysis, region, tensor_mask):
    flow = a.flow
    a.tensor_mask = tensor_mask

    def zero(k) -> bool:
        g = a.grad(k)
        return g is not None and not g.any()

    def nonzero(k) -> bool:
        g = a.grad(k)
        return g is not None and bool(g.any())

    frontier: dict = {}
    for c in sorted(region):
        op = flow.ops[c]
        if not any(nonzero(o) for o in op.outputs):
            continue
        for t in dict.fromkeys(op.data):
            if tensor_mask(t) and zero(t) and not _passed_on_beside(op, t, tensor_mask, nonzero):
                frontier.setdefault(t, []).append(c)
    out = []
    # a step function in the region at all (else no frontier can be behind one: no walk)
    steps = any(ZERO_GRADIENT.get(flow.ops[i].type, ()) is None for i in region)
    for t, consumers in frontier.items():
        mask = tensor_mask(t)
        behind = steps_behind(a, t, tensor_mask) if steps else []
        if behind:  # zero by construction further back: this frontier is not what starves them
            out += [(cause, m & mask) for cause, m in behind]
            continue
        if len(consumers) >= 2:
            cancel = cancellation(a, t, consumers)
            if cancel is not None:
                out.append((cancel, mask))
                continue
        for c in consumers:
            cause = explain(a, c, t)
            stepped = _behind_zero_factor(a, c, t, tensor_mask) if cause is None and steps else []
            if stepped:
                out += [(step, m & mask) for step, m in stepped]
            else:
                out.append((cause, mask))
    return out


def _behind_zero_factor(a: Analysis, c: int, t, tensor_mask) -> list[tuple[Cause, int]]:
    """A product whose other factor is zero by construction: every path from that factor
    back to the sources crosses a step function (``log(tf.sign(p)) * advantage``: the sign
    makes the log-probability ``log 1 = 0``). The step is the cause, not the batch."""
    op = a.flow.ops[c]
    if op.type not in PRODUCTS:
        return []
    for k in op.data:
        v = a.value(k) if k != t else None
        if v is not None and v.size and not v.any():
            behind = steps_behind(a, k, tensor_mask)
            if behind:
                return behind
    return []


def _passed_on_beside(op, t, tensor_mask, nonzero) -> bool:
    """A selection gives the gradient to another of its inputs, made from the same sources
    (``tf.minimum(surr1, surr2)`` of two equal values gives it to one side): for those
    sources this zero is a choice between two of their own paths, not why their gradient is
    zero (whatever stops it on the chosen path is a frontier of its own)."""
    if op.type not in _SELECTIONS:
        return False
    mask = tensor_mask(t)
    return any(d != t and nonzero(d) and tensor_mask(d) & mask == mask for d in op.data)


def explain(a: Analysis, c: int, t) -> Cause | None:
    """Why the consumer ``c`` sends a zero gradient to its input ``t`` (None: by chance, or
    not known)."""
    op = a.flow.ops[c]
    kind = op.type
    g = a.output_grad(c)
    if g is None:
        return None
    if kind in ZERO_GRADIENT:
        return zero_derivative(a, c, t)  # a step function: zero by construction, not by the batch
    if kind in ("Relu", "Relu6"):
        return dead_relu(a, c, t, g)
    if kind in SQUASH:
        return saturated(a, c, t, g)
    if kind in CLIPS:
        return clipped(a, c, t, g)
    if kind in ("Select", "SelectV2"):
        return masked(a, c, t, g)
    if kind in PRODUCTS or kind in ("RealDiv", "Div", "DivNoNan"):
        return zero_factor(a, c, t)
    if kind in ("Square", "Abs"):
        return zero_value(a, t, c)
    if kind in LOOPS or op.tag == TAG_FUNCTION or kind.startswith(LIST_OPS_PREFIX):
        inner = inside_function(a, c, t, causes) if op.tag == TAG_FUNCTION else None
        return inner if inner is not None else loop(a, c, t)
    if kind in ("Softmax", "LogSoftmax"):
        return _one_class(a, c, t)
    return None


def _one_class(a: Analysis, c: int, t) -> Cause | None:
    """A softmax over an axis of size 1: its output is 1 (log: 0) whatever its input, so
    it passes no gradient, by the shape, not by the batch."""
    x = a.value(t)
    if x is None or x.ndim == 0 or x.shape[-1] != 1:
        return None
    what = "log_softmax" if a.flow.ops[c].type == "LogSoftmax" else "softmax"
    constant = "0" if what == "log_softmax" else "1"
    reason = (
        f"{a.call_text(c)} normalises over an axis of size 1 (input shape {tuple(x.shape)}): "
        f"{what} of a single value is always {constant}, so it passes no gradient"
    )
    return Cause("GC201", "one-class", c, c, reason)
