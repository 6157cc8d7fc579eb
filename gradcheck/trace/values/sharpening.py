"""Which side of a comparison is a *sharpened* copy of the network's output: the target of a
consistency or pseudo-label loss (GC203).

When both sides of an error are functions of the same network (the same forward output, or
two calls of it on a clean and an augmented example), nothing tells the prediction from the
target by position. What does is what each side did to the output: a target is the
network's own prediction made more confident (UDA, FixMatch, MixMatch, Mean Teacher):

- a softmax or sigmoid at a temperature below 1: ``softmax(z / 0.5)``, ``softmax(z * 2)``;
- a power above 1 of probabilities (MixMatch's ``p ** (1 / T)``, normalised again).

The side sharpened more than the other is the target. Two views compared through the same
squash (``softmax(z1) - softmax(z2)``: a symmetric consistency loss, SimSiam's two
branches) have no sharper side and no target here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gradcheck.trace.record import _tf

__all__ = ["Sharpening", "sharpening"]

_SQUASHES = frozenset({"Softmax", "LogSoftmax", "Sigmoid"})
#: Ops between a squash (or a power) and the comparison that keep what it made: copies, a
#: renormalisation (``p / sum(p)``), a clip to [ε, 1], a log, a negation.
_KEEPS = frozenset(
    {
        "Identity",
        "Cast",
        "Reshape",
        "ExpandDims",
        "Squeeze",
        "RealDiv",
        "Maximum",
        "Minimum",
        "ClipByValue",
        "Log",
        "Neg",
    }
)
_HOPS = 8


@dataclass(frozen=True)
class Sharpening:
    factor: float  # > 1: sharper than the output itself; 1: the output's own squash
    op: int  # the op that sharpens (the scaled squash, the power): where the target is made


def sharpening(flow, key, constant: Callable[[object], float | None]) -> Sharpening | None:
    """How much the side ``key`` sharpens the network's output: the squash (or power) it
    is made by, within a few ops that keep its meaning, and the factor of its temperature.
    ``constant(k)``: the value of ``k`` when it is a number no trained variable feeds."""
    for _ in range(_HOPS):
        p = flow.producer.get(key)
        if p is None:
            return None
        op = flow.ops[p]
        if op.type in _SQUASHES and op.data:
            return Sharpening(_scale(flow, op.data[0], constant), p)
        if op.type == "Pow" and len(op.data) == 2:
            # a power of the probabilities themselves (not of `1 - p`: a focal factor)
            exponent = constant(op.data[1])
            base = sharpening(flow, op.data[0], constant)
            if exponent is not None and exponent > 1 and base is not None and flow.ops[base.op].type != "Pow":
                return Sharpening(exponent * base.factor, p)
            return None
        if op.type not in _KEEPS or not op.data:
            return None
        key = op.data[0]
    return None


def logits_scale(flow, key, constant: Callable[[object], float | None]) -> float:
    """The temperature factor of logits a loss squashes itself (a cross-entropy's logits)."""
    return _scale(flow, key, constant)


def _scale(flow, key, constant) -> float:
    """``x / T`` → 1/T, ``x * k`` → k, else 1: the factor the squash's input is scaled by."""
    p = flow.producer.get(key)
    if p is None:
        return 1.0
    op = flow.ops[p]
    if op.type in ("RealDiv", "Div") and len(op.data) == 2:
        t = constant(op.data[1])
        return 1.0 / t if t is not None and t > 0 else 1.0
    if op.type == "Mul" and len(op.data) == 2:
        for k in op.data:
            v = constant(k)
            if v is not None and v > 0:
                return v
    return 1.0


def constant_of(ctx, tmask) -> Callable[[object], float | None]:
    """``constant(k)``: the scalar value of tensor ``k`` when no trained variable feeds it
    and it holds one number (a temperature, an exponent); None otherwise."""
    orphans = getattr(getattr(ctx.session, "recorder", None), "orphans", {}) if ctx.eager else {}

    def constant(k) -> float | None:
        if tmask(k):
            return None
        tensor = ctx.tensors.get(k)
        if tensor is None:
            tensor = orphans.get(k)
        if tensor is None:
            return None
        try:
            value = _tf.tf.get_static_value(tensor)
        except Exception:  # noqa: BLE001 - not a value known here
            value = None
        if value is None:
            return None
        value = np.asarray(value, np.float64)
        if not value.size or not np.all(value == value.flat[0]) or not np.isfinite(value.flat[0]):
            return None
        return float(value.flat[0])

    return constant
