"""Where a non-finite loss began (GC204): the first forward op whose output is NaN or Inf
while its inputs are finite, found by walking back from the loss along the values that are
not finite, and what made it so.

The walk follows only non-finite values, so a non-finite value the loss never sees (a
``-inf`` attention mask before a softmax, an Inf in the branch of a ``tf.where`` that is not
selected, a NaN in a column the model never reads) is never reached: the softmax, the
``tf.where`` and the slice have finite outputs and the walk stops short of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gradcheck.trace.record.dataflow import TAG_FUNCTION, TAG_READ, Flow, WriteKey

__all__ = ["Origin", "find_origin"]

_LOGS = frozenset({"Log", "Log1p"})
_SQRTS = frozenset({"Sqrt", "Rsqrt"})
_DIVS = frozenset({"RealDiv", "Div", "Reciprocal", "Inv", "FloorDiv", "TruncateDiv", "Xdivy", "FloorMod"})
_EXPS = frozenset({"Exp", "Expm1", "Cosh", "Sinh"})
_DOMAIN = frozenset({"Acos", "Asin", "Atanh", "Acosh", "Lgamma", "Digamma"})
_PRODUCTS = frozenset({"Mul", "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum"})
_HALF = ("float16", "bfloat16")
_SOFTMAX = frozenset({"Softmax", "LogSoftmax"})
#: Ops a probability comes out of, and those a log's argument may pass on the way.
_PROBABILITIES = frozenset({"Softmax", "Sigmoid"})
_SQUARES = frozenset({"Square", "Pow"})
#: Ops whose output can be negative, of which a log is taken by mistake (a tanh decoder).
_SIGNED_OUTPUTS = frozenset({"Tanh", "BiasAdd", "MatMul"})
_ON_THE_WAY = frozenset({"Identity", "Cast", "Reshape", "Maximum", "Minimum", "ClipByValue", "GatherV2", "Select"})
#: Ops that hand the step its batch (a ``tf.data`` iterator inside the traced step): what
#: they output entered as data, whatever their resource input holds.
_DATA_SOURCES = frozenset(
    {"IteratorGetNext", "IteratorGetNextSync", "OptionalGetValue", "MultiDeviceIteratorGetNextFromShard"}
)
_ARITHMETIC = frozenset(
    {"AddV2", "Add", "Sub", "Mul", "Square", "Pow", "Neg", "RealDiv", "Identity", "Cast", "Reshape"}
)


@dataclass
class Origin:
    """Where the non-finite loss began. ``op`` is the op that made the first non-finite
    value (None when it was already in the batch or a weight: ``key`` is that value)."""

    variant: str  # a fix variant of GC204 ("log", "div", ..., "data", "weights")
    reason: str  # what made the value non-finite, in words
    op: int | None = None
    key: object = None
    kind: str = "NaN"  # of the loss: "NaN" or "infinite"
    notes: list[str] = field(default_factory=list)
    #: Other ops that made a non-finite value from finite inputs on the way to the same loss
    #: (both logs of a focal loss): (op, what made it non-finite). Each needs the same fix.
    others: list[tuple[int, str]] = field(default_factory=list)


def _floating(v) -> bool:
    return v.dtype.kind in "fc" or "float" in v.dtype.name  # bfloat16 (ml_dtypes) is kind "V"


def nonfinite(v) -> bool:
    return v is not None and _floating(v) and v.size > 0 and not np.isfinite(v).all()


def find_origin(
    flow: Flow, targets: list, value: Callable[[object], np.ndarray | None], text: Callable[[int], str]
) -> Origin | None:
    """The origin of the non-finite ``targets``. ``value(key)``: a tensor's forward value
    (None when unknown); ``text(op)``: the user's expression for an op."""
    bad_targets = [k for k in targets if nonfinite(value(k))]
    if not bad_targets:
        return None
    kind = "NaN" if any(np.isnan(value(k)).any() for k in bad_targets) else "infinite"
    origins: list[tuple[int, object]] = []  # (op index or -1 for a producer-less value, key)
    uncertain: list[tuple[int, object]] = []
    path_ops: set[int] = set()
    seen: set = set()
    stack = list(bad_targets)
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        p = flow.producer.get(k)
        if p is None:
            origins.append((-1, k))
            continue
        op = flow.ops[p]
        path_ops.add(p)
        if op.type in _DATA_SOURCES:
            origins.append((-1, k))
            continue
        ins = [i for i in dict.fromkeys(op.inputs) if not isinstance(i, WriteKey) and i not in flow.resources]
        bad = [i for i in ins if nonfinite(value(i))]
        if op.type in ("Select", "SelectV2"):
            bad = _selected(op, value, bad)
        if op.type in _SOFTMAX and _fully_masked(value(op.data[0]) if op.data else None):
            origins.append((p, k))  # a row masked everywhere: exp(-inf) / sum(exp(-inf)) = 0/0
            continue
        if bad:
            stack.extend(bad)
        elif any(value(i) is None for i in ins) and op.tag != TAG_READ:
            uncertain.append((p, k))  # an input's value was not kept: it may be the non-finite one
        elif op.tag == TAG_READ or op.type in ("Placeholder", "Const", "ReadVariableOp"):
            origins.append((-1, k))  # the value entered as it is: a weight, the batch, a literal
        else:
            origins.append((p, k))
    made = [(p, k) for p, k in origins if p >= 0]
    if made or (uncertain and not origins):
        p, k = min(made or uncertain, key=lambda pk: pk[0])
        origin = _explain(flow, p, value, text)
        if not made:
            origin.notes.append(
                "the values of this op's inputs were not kept: the first non-finite value may be earlier"
            )
        origin.kind = kind
        origin.others = [(q, _explain(flow, q, value, text).reason) for q in sorted({q for q, _ in made} - {p})[:3]]
        origin.notes += _zero_times_inf(flow, p, path_ops, value, text)
        if any(note.startswith("0 × inf") for note in origin.notes) and origin.variant == "log":
            origin.variant = "zero-inf"
        return origin
    if kind == "NaN" and origins and all(_program_infinity(flow, k, value) for _, k in origins):
        # the infinities came from a constant the program built (a -inf mask, padding), not
        # from the batch: the NaN was made where an op met them (0 × inf, inf - inf)
        maker = _nan_from_infinities(flow, path_ops, value)
        if maker is not None:
            return _infinities_met(flow, maker, value, text)
    p, k = origins[0] if origins else (-1, bad_targets[0])
    read = flow.producer.get(k)
    if read is not None and flow.ops[read].tag == TAG_READ:
        return Origin("weights", "a weight the loss reads is already NaN or Inf", read, k, kind)
    v = value(k)
    count = int((~np.isfinite(v)).sum()) if v is not None else 0
    values = f"{count} NaN or Inf value{'s' if count != 1 else ''}" if count else "NaN or Inf values"
    return Origin("data", f"the batch already holds {values}", None, k, kind)


def _program_infinity(flow: Flow, k, value) -> bool:
    """``k`` is a non-finite constant of the program, not the batch: infinities without NaN,
    in a literal (a scalar: ``tf.fill(shape, -np.inf)``, ``x + float("-inf")``) or a
    ``Const`` op of a traced step."""
    v = value(k)
    if v is None or not _floating(v) or np.isnan(v).any():
        return False
    p = flow.producer.get(k)
    return v.size == 1 if p is None else flow.ops[p].type == "Const"


def _nan_from_infinities(flow: Flow, path_ops: set[int], value) -> int | None:
    """The first op on the way to the loss whose output holds NaN while its inputs hold
    infinities and no NaN."""
    for j in sorted(path_ops):
        op = flow.ops[j]
        out = value(op.outputs[0]) if op.outputs else None
        if out is None or not _floating(out) or not np.isnan(out).any():
            continue
        ins = [value(i) for i in op.inputs if not isinstance(i, WriteKey) and i not in flow.resources]
        floats = [v for v in ins if v is not None and _floating(v)]
        if any(np.isnan(v).any() for v in floats):
            continue
        if any(np.isinf(v).any() for v in floats):
            return j
    return None


def _infinities_met(flow: Flow, p: int, value, text) -> Origin:
    op = flow.ops[p]
    call = text(p)
    if op.type in _PRODUCTS:
        what = f"{call} multiplies an infinite value by 0 (0 × inf is NaN)"
    elif op.type in ("Sub", "AddV2", "Add", "AddN", "Sum"):
        what = f"{call} adds infinities of opposite signs (inf - inf is NaN)"
    elif op.type in _DIVS:
        what = f"{call} divides an infinite value by another (inf / inf is NaN)"
    else:
        what = f"{call} makes NaN from infinite inputs"
    note = "the infinite value is a constant the program built (a -inf mask, padding), not the batch"
    return Origin("inf-constant", what, p, kind="NaN", notes=[note])


def _selected(op, value, bad: list) -> list:
    """The branches of a ``tf.where`` whose non-finite values it selects (an Inf in the
    branch it discards is not on the way to the loss)."""
    if len(op.inputs) < 3 or value(op.inputs[0]) is None:
        return bad
    condition = value(op.inputs[0]).astype(bool)
    out = []
    for k in bad:
        branch = value(k)
        if op.type == "Select" and condition.ndim == 1 and branch.ndim > 1:  # Select (v1) picks rows
            condition = condition.reshape((-1,) + (1,) * (branch.ndim - 1))
        take = condition if k == op.inputs[1] else ~condition
        if k == op.inputs[1] and k == op.inputs[2]:
            take = np.ones_like(condition)
        try:
            taken = np.where(take, branch, 0)
        except ValueError:  # shapes that do not broadcast here (a Select of rows): keep it
            out.append(k)
            continue
        if not np.isfinite(taken).all():
            out.append(k)
    return out


def _fully_masked(x) -> bool:
    """Whether a softmax's input has a row that is -inf everywhere (and no NaN)."""
    if x is None or not _floating(x) or x.ndim == 0 or x.size == 0 or np.isnan(x).any():
        return False
    return bool(np.isneginf(x).all(axis=-1).any())


def _explain(flow: Flow, p: int, value, text) -> Origin:
    op = flow.ops[p]
    kind = op.type
    call = text(p)
    if kind in _SOFTMAX and op.data and _fully_masked(value(op.data[0])):
        rows = int(np.isneginf(value(op.data[0])).all(axis=-1).sum())
        return Origin(
            "masked-softmax",
            f"{call} normalises {rows} row{'s' if rows != 1 else ''} masked with -inf at every position (0/0)",
            p,
        )
    ins = [value(i) for i in op.inputs]
    x = ins[0] if ins else None
    out = value(op.outputs[0]) if op.outputs else None
    if op.tag == TAG_FUNCTION or kind in ("PartitionedCall", "StatefulPartitionedCall"):
        return Origin("", f"{call} (a traced function) returns NaN or Inf from finite inputs", p)
    if out is not None and out.dtype.name in _HALF and kind not in _LOGS | _SQRTS | _DIVS | _DOMAIN:
        return Origin(
            "float16",
            f"{call} overflows {out.dtype.name} (largest value 65504) under mixed precision",
            p,
        )
    if kind in _LOGS and x is not None:
        edge = 0.0 if kind == "Log" else -1.0
        negative, at_edge = int((x < edge).sum()), int((x == edge).sum())
        what = (
            f"{call} takes the log of a negative value ({negative} of {x.size} arguments are below {edge:g})"
            if negative
            else f"{call} takes the log of {edge:g} ({at_edge} of {x.size} arguments are exactly {edge:g})"
        )
        variant = "log"
        upstream = _upstream_types(flow, op.data[0] if op.data else None)
        if "Tanh" in upstream and upstream & _SQUARES:
            variant = "log-tanh"  # log(1 - tanh(u)**2): a squashed policy's correction
        elif negative and upstream & _SIGNED_OUTPUTS:
            variant = "log-signed"  # the log of an output that can be negative (tanh, linear)
        elif upstream & _PROBABILITIES and not negative:
            variant = "log-prob"
        return Origin(variant, what, p)
    if kind in _LOGS | _SQRTS and x is None and out is not None and _floating(out):
        # the argument was not kept (a batch an iterator made outside the tape): the result
        # says which (NaN: below the domain; -inf: at its edge)
        name = "log" if kind in _LOGS else "square root"
        edge = "-1" if kind == "Log1p" else "0"
        below = np.isnan(out).any()
        what = (
            f"of a negative value ({int(np.isnan(out).sum())} of {out.size} results are NaN)" if below else f"of {edge}"
        )
        if kind == "Rsqrt" and not below:
            return Origin("div", f"{call} is the reciprocal square root of 0", p)
        return Origin("log" if kind in _LOGS else "sqrt", f"{call} takes the {name} {what}", p)
    if kind in _SQRTS and x is not None:
        negative = int((x < 0).sum())
        if negative:
            return Origin("sqrt", f"{call} takes the square root of a negative value ({negative} of {x.size})", p)
        return Origin("div", f"{call} is the reciprocal square root of 0", p)
    if kind in _DIVS:
        denominator = ins[1] if kind not in ("Reciprocal", "Inv") and len(ins) > 1 else x
        if "/" not in call and "div" not in call.lower():
            call = "a division (`/`)"  # graph tracebacks carry lines: the span found is another call's
        if denominator is None:
            return Origin("div", f"{call} divides by zero", p)
        zeros = int((denominator == 0).sum())
        return Origin("div", f"{call} divides by zero ({zeros} of {denominator.size} denominators exactly 0)", p)
    if kind == "Pow":
        return Origin("pow", f"{call} raises a negative or zero base to a power outside its domain", p)
    if kind in _EXPS:
        biggest = float(np.max(x)) if x is not None and x.size else None
        at = f" (its largest argument is {biggest:.4g})" if biggest is not None else ""
        return Origin("exp", f"{call} overflows to inf{at}", p)
    if kind == "Mean" and x is not None and x.size == 0:
        # 0 / 0: a replica's share of a batch too small to split, or a mask that kept nothing
        return Origin("empty-mean", f"{call} takes the mean of an empty tensor (0 values): 0 / 0 is NaN", p)
    if kind in _DOMAIN:
        return Origin("domain", f"{call} is evaluated outside its domain", p)
    if out is not None and np.isnan(out).any() and not np.isinf(out).any():
        return Origin("overflow", f"{call} makes NaN from finite inputs", p)
    return Origin("overflow", f"{call} overflows float32 (its result exceeds 3.4e38)", p)


def _upstream_types(flow: Flow, k, hops: int = 8) -> set[str]:
    """The op types the value ``k`` comes from through elementwise arithmetic (what a log's
    argument is made of: a softmax, a tanh)."""
    found: set[str] = set()
    keys, seen = [k], set()
    for _ in range(hops):
        nxt = []
        for key in keys:
            p = flow.producer.get(key)
            if p is None or p in seen:
                continue
            seen.add(p)
            op = flow.ops[p]
            found.add(op.type)
            if op.type in _ARITHMETIC or op.type in _ON_THE_WAY:
                nxt.extend(op.data)
        keys = nxt
    return found


def _zero_times_inf(flow: Flow, origin: int, path_ops: set[int], value, text) -> list[str]:
    """A note for a product on the way to the loss that turns the origin's Inf into NaN."""
    out = flow.ops[origin].outputs
    if not out or value(out[0]) is None or np.isnan(value(out[0])).any():
        return []
    for j in sorted(path_ops):
        op = flow.ops[j]
        if j <= origin or op.type not in _PRODUCTS or not op.outputs:
            continue
        ins = [value(i) for i in op.inputs]
        result = value(op.outputs[0])
        if result is None or any(v is None for v in ins) or not np.isnan(result).any():
            continue
        if any(_floating(v) and np.isnan(v).any() for v in ins):
            continue
        return [f"0 × inf is NaN: {text(j)} multiplies the infinite value by 0"]
    return []
