"""The GC202 pass: the frontiers of a non-finite gradient, and why each is not finite.

A frontier is a tensor whose gradient is NaN or inf while an op consuming it has finite
output gradients, and no other consumer passed the NaN on (then it was born further down).
Of several such consumers, those whose own gradient (``own_vjp``) is not finite are the
culprits. Each is explained by its kind (sqrt or log at 0, a division by zero, an exp that
overflows, an inf factor and where it comes from), and by a ``tf.where`` downstream that
discards the value in the forward pass but not in the backward pass."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.inside import inside_function
from gradcheck.trace.values.frontier.ops import PASS_THROUGH, PRODUCTS


def causes(a: Analysis, region, tensor_mask):
    flow = a.flow

    def bad(k) -> bool:
        g = a.grad(k)
        return g is not None and not np.isfinite(g).all()

    def finite_outputs(c) -> bool | None:
        known = [a.grad(o) for o in flow.ops[c].outputs if a.grad(o) is not None]
        if not known:
            return None
        return all(np.isfinite(g).all() for g in known)

    frontier: dict = {}
    for c in sorted(region):
        op = flow.ops[c]
        if not finite_outputs(c):
            continue
        for t in dict.fromkeys(op.data):
            if tensor_mask(t) and bad(t):
                frontier.setdefault(t, []).append(c)
    out = []
    for t, consumers in frontier.items():
        others = [j for j in flow.data_consumers.get(t, ()) if j in region and j not in consumers]
        if any(finite_outputs(j) is False for j in others):
            continue  # the NaN reached t from another consumer: it was born further down
        if len(consumers) > 1:
            own = [(c, a.values.own_vjp(c, t)) for c in consumers]
            culprits = [c for c, g in own if g is not None and not np.isfinite(g).all()]
            if culprits:
                consumers = culprits
        for c in consumers:
            out.append((explain(a, c, t), tensor_mask(t)))
    return out


def explain(a: Analysis, c: int, t) -> Cause:
    op = a.flow.ops[c]
    inner = inside_function(a, c, t, causes)
    if inner is not None:
        return inner  # a tf.function called eagerly: the op inside its body
    kind = op.type
    x = a.value(t)
    call = a.call_text(c)
    blame = c
    variant, reason = "", f"the gradient of {call} is not finite at the values of this batch"
    notes: list[str] = []
    zeros = int((x == 0).sum()) if x is not None else 0
    if kind in ("Sqrt", "Rsqrt"):
        variant = "norm" if _mentions_norm(call) else "sqrt"
        what = "tf.norm" if variant == "norm" else "sqrt"
        reason = f"the derivative of {what} at 0 is infinite, and {zeros or 'some'} of its inputs are exactly 0"
    elif kind == "EuclideanNorm":
        variant = "norm"
        reason = "the derivative of the Euclidean norm of a zero vector is 0/0"
    elif kind in ("Log", "Log1p"):
        variant = "log"
        edge = "0" if kind == "Log" else "-1"
        count = zeros if kind == "Log" else (int((x == -1).sum()) if x is not None else 0)
        reason = f"the derivative of log at {edge} is infinite, and {count or 'some'} of its inputs are exactly {edge}"
    elif kind in ("RealDiv", "Div", "Reciprocal", "Inv", "FloorDiv", "Xdivy"):
        variant = "div"
        denominator = a.value(op.inputs[1]) if kind not in ("Reciprocal", "Inv") and len(op.inputs) > 1 else x
        count = int((denominator == 0).sum()) if denominator is not None else 0
        reason = (
            f"{call} divides by zero ({count or 'some'} denominators are exactly 0), so its gradient is infinite there"
        )
    elif kind == "Pow":
        variant = "pow"
        reason = f"the derivative of {call} at a zero base is infinite (or log(0) for the exponent)"
    elif kind in ("Exp", "Expm1"):
        variant = "exp"
        reason = f"{call} overflows to inf on this batch, and inf times a zero gradient is NaN"
    elif kind in ("Acos", "Asin"):
        variant = "acos"
        reason = f"the derivative of {kind.lower()} at ±1 is infinite, and some of its inputs are exactly ±1"
    elif kind == "Atan2":
        variant = "atan2"
        reason = "the derivative of atan2 at (0, 0) is 0/0"
    elif kind in PRODUCTS:
        other = next((k for k in op.data if k != t), None)
        v = a.value(other) if other is not None else None
        if v is not None and not np.isfinite(v).all():
            variant = "inf-factor"
            reason = f"{call} is inf or NaN on this batch, and its gradient multiplies that value by 0"
            origin = _nonfinite_origin(a, other)
            if origin is not None and origin != c:
                # blamed where the inf is made (the line the user changes); named where it is multiplied
                blame = origin
                reason = (
                    f"{a.call_text(origin)} is inf or NaN on this batch, and the gradient of {call} "
                    f"({a.line_of(c)}) multiplies that value by 0"
                )
    guard = _guarding_where(a, c)
    if guard is not None and "where" not in a.call_text(guard):
        # a select inside a library call (a Keras loss's clipping): not a tf.where the user wrote,
        # and the double-where advice would not fit; the op's own fix (an epsilon) stands
        guard = None
    if guard is not None:
        notes.append(
            f"the non-finite value is discarded by {a.call_text(guard)} ({a.line_of(guard)}) in the forward "
            "pass, but not in the backward pass: tf.where sends a zero gradient to the unused branch, "
            "and 0 × inf is NaN"
        )
        variant = "where"
    return Cause("GC202", variant, blame, c, reason, notes, {"kind": _kind_word(a.grad(t))})


def _nonfinite_origin(a: Analysis, k, hops: int = 20):
    flow = a.flow
    found = None
    for _ in range(hops):
        p = flow.producer.get(k)
        if p is None:
            return found
        found = p
        nxt = [d for d in flow.ops[p].data if a.value(d) is not None and not np.isfinite(a.value(d)).all()]
        if not nxt:
            return p
        k = nxt[0]
    return found


def _guarding_where(a: Analysis, c: int, hops: int = 8):
    """A tf.where downstream of ``c`` that takes its value as a branch."""
    flow = a.flow
    keys, seen = list(flow.ops[c].outputs), set()
    for _ in range(hops):
        nxt = []
        for k in keys:
            for j in flow.data_consumers.get(k, ()):
                if j in seen:
                    continue
                seen.add(j)
                op = flow.ops[j]
                if op.type in ("Select", "SelectV2") and k in op.inputs[1:]:
                    return j
                if op.type in PASS_THROUGH or op.type in PRODUCTS or op.type in ("Mul", "Neg", "Log", "Sqrt"):
                    nxt.extend(op.outputs)
        keys = nxt
        if not keys:
            break
    return None


def _mentions_norm(call: str) -> bool:
    return "norm" in call.lower() or "distance" in call.lower()


def _kind_word(g) -> str:
    if g is None:
        return "not finite"
    if np.isnan(g).any():
        return "NaN"
    return "infinite"
