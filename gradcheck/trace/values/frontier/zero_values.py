"""GC201 by a zero factor: a product (or a division's numerator) with a factor that is
identically zero, and why that value is zero, followed back to where it is made: a constant,
a mask (a comparison, or a threshold built from ``tf.sign``), a dead ReLU or saturated
squash, a ``tf.where``, a clip that passed a zero through, or a weight that is zero and
never moves. A value that is zero by chance (the batch, a weight the first update moves) is no
cause."""

from __future__ import annotations

from gradcheck.rules import classify_op
from gradcheck.trace.diagnose.cuts import BLOCK
from gradcheck.trace.record.dataflow import TAG_READ
from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.earlier import earlier_zero
from gradcheck.trace.values.frontier.masks import select_zero
from gradcheck.trace.values.frontier.ops import CLIPS, CONSTANTS, MASKS, PASS_THROUGH, PRODUCTS, ROUNDING, SQUASH
from gradcheck.trace.values.frontier.step import hard_threshold
from gradcheck.trace.values.frontier.structure import jitter, off_by_structure


def zero_factor(a: Analysis, c: int, t) -> Cause | None:
    op = a.flow.ops[c]
    others = [k for k in op.data if k != t]
    if op.type in ("RealDiv", "Div", "DivNoNan"):
        if list(op.inputs).index(t) == 0:
            return None  # the numerator's gradient is g / y: never zero for a nonzero g
        others = [op.inputs[0]]
    for k in others:
        v = a.value(k)
        if v is not None and v.size and not v.any():
            return zero_value(a, k, c)
    return None


def zero_value(a: Analysis, k, consumer: int, depth: int = 0) -> Cause | None:
    """Why the value ``k`` is identically zero, when that is structural (None: by chance,
    e.g. an all-zero input batch, or a zero-initialised weight that the first update
    moves)."""
    flow = a.flow
    if depth > 12:
        return None
    earlier = earlier_zero(a, k, consumer)
    if earlier is not None:
        return earlier  # an earlier request's zero gradient, for the reason found there
    p = flow.producer.get(k)
    if p is None:
        return None  # an input of the step: the batch is zero by chance
    op = flow.ops[p]
    kind = op.type
    if op.tag == TAG_READ or kind in ("ReadVariableOp", "ResourceGather"):
        return _zero_weight(a, p, consumer)
    if kind in ("Relu", "Relu6"):
        x = a.value(op.data[0]) if op.data else None
        if x is None:
            return None
        if not x.any():
            return zero_value(a, op.data[0], consumer, depth + 1)
        if (jitter(a.rng, x) > 0).any() or not off_by_structure(x, x.ravel(), None):
            return None
        n = x.size
        reason = f"relu is dead on the whole batch: all {n} of its inputs are ≤ 0 (the largest is {float(x.max()):.3g})"
        return Cause("GC201", "dead-relu", p, p, reason)
    if kind in CONSTANTS:
        reason = f"{a.call_text(consumer)} multiplies the gradient by a constant zero"
        return Cause("GC201", "zero-constant", consumer, consumer, reason)
    if kind in SQUASH:
        reason = f"{kind.lower()} outputs exactly 0 on the whole batch (saturated)"
        return Cause("GC201", "saturated", p, consumer, reason, [], {"act": kind.lower()})
    if kind in ROUNDING or (kind == "Cast" and op.inputs and not flow.is_differentiable(op.inputs[0])):
        cut = cut_value(a, p)
        if cut is not None:
            return cut
    if kind in MASKS or (kind == "Cast" and op.inputs and not flow.is_differentiable(op.inputs[0])):
        reason = f"the mask {a.call_text(p)} is zero everywhere on the batch, so what it multiplies gets no gradient"
        return Cause("GC201", "zero-mask", p, consumer, reason)
    if kind in ("Select", "SelectV2"):
        return select_zero(a, p, consumer, depth)
    if hard_threshold(a, k):
        # `(tf.sign(x - t) + 1) / 2`: a mask built from a step function, zero on the whole batch
        reason = f"the mask {a.call_text(p)} is zero everywhere on the batch, so what it multiplies gets no gradient"
        notes = ["it is a step function of its inputs (tf.sign): its gradient is zero everywhere, so it never opens"]
        return Cause("GC201", "zero-mask", p, consumer, reason, notes)
    if kind in CLIPS:
        # A clip whose result is zero passed a zero through (`tf.clip_by_value(p * mask, 0, 1)`,
        # or the `tf.minimum` half of a clip): why that value is zero. A bound is no cause: a
        # constant 0 bound is a clip, not a multiplication by zero.
        for d in op.data[:1] if kind == "ClipByValue" else op.data:
            v = a.value(d)
            q = flow.producer.get(d)
            if v is not None and v.size and not v.any() and q is not None and flow.ops[q].type not in CONSTANTS:
                return zero_value(a, d, consumer, depth + 1)
        return None
    if kind in PRODUCTS or kind in ("RealDiv", "Div"):
        # one zero factor makes the product zero: the first one decides
        for d in op.data if kind in PRODUCTS else op.data[:1]:
            v = a.value(d)
            if v is not None and v.size and not v.any():
                return zero_value(a, d, consumer, depth + 1)
        return None
    if kind in PASS_THROUGH:
        # A sum, a concatenation or a copy is structurally zero only when every part is:
        # `prediction - y` is zero when the two agree on this batch, which is chance. A part
        # that is a zero-initialised bias the step trains (`dense(cut) + b`) adds nothing the
        # other parts lack: the sum is zero for the structural reason of those parts.
        causes = []
        for d in op.data:
            v = a.value(d)
            if v is None or not v.size:
                continue
            cause = zero_value(a, d, consumer, depth + 1) if not v.any() else None
            if cause is None:
                if not v.any() and _trained_weight(a, d):
                    continue
                return None
            causes.append(cause)
        return causes[0] if causes else None
    return None


def cut_value(a: Analysis, p: int) -> Cause | None:
    """A value that is zero because an op with no gradient made it from the sources: an
    integer cast (`tf.cast(tf.cast(h, tf.int32), h.dtype)` of activations in [0, 1)) or a
    rounding of values the starved sources feed. That op cuts the path it is on (GC102,
    GC103), and the zero it leaves, multiplying the sources' other paths (the similarities of
    two views), zeroes those too: the cut is the cause, named with its own code. A mask made
    by a comparison is no such cut: it is meant to pass nothing where it is closed (GC201)."""
    flow = a.flow
    mask = a.tensor_mask
    if mask is None:
        return None
    i, hops = p, 0
    while hops < 8:
        op = flow.ops[i]
        if op.type in MASKS:
            return None
        float_in = [k for k in op.data if flow.is_differentiable(k) and k not in flow.resources]
        if op.type in ROUNDING or (op.type == "Cast" and float_in):
            if float_in and any(mask(k) for k in float_in) and classify_op(op.type):
                notes = [
                    f"TensorFlow gives these variables zeros, not None: {a.call_text(i)} cuts one of their paths, "
                    "and the value it leaves is 0 on the whole batch and multiplies their other paths"
                ]
                return Cause("GC1", "hidden-cut", i, p, "", notes, {"cut_kind": BLOCK})
            return None
        ints = [k for k in op.inputs if not flow.is_differentiable(k) and k in flow.producer]
        if len(ints) != 1:
            return None
        i, hops = flow.producer[ints[0]], hops + 1
    return None


def _trained_weight(a: Analysis, k) -> bool:
    """``k`` is a read of a source whose gradient is not zero: the first update moves it."""
    p = a.flow.producer.get(k)
    if p is None:
        return False
    op = a.flow.ops[p]
    if not (op.tag == TAG_READ or op.type == "ReadVariableOp") or not op.inputs:
        return False
    handle = op.inputs[0]
    if not any(s.key == handle for s in a.ctx.sources):
        return False
    g = a.grad(handle)
    return g is not None and bool(g.any())


def _zero_weight(a: Analysis, read_op: int, consumer: int) -> Cause | None:
    """A factor that is a variable equal to zero: structural only when that variable
    gets no (or a zero) gradient itself, so it never moves."""
    op = a.flow.ops[read_op]
    handle = op.inputs[0] if op.inputs else None
    source = next((s for s in a.ctx.sources if s.key == handle), None)
    if source is not None:
        g = a.grad(handle)
        if g is not None and g.any():
            return None  # zero-initialised, and trained: the first update moves it
        name = source.name
    else:
        name = "a weight that is not trained here"
    reason = (
        f"{name} is zero and gets no gradient itself, so what it multiplies gets none either and neither ever moves"
    )
    notes = ["zero-initialising every weight of a chain (or a frozen zero weight) leaves the chain stuck at zero"]
    return Cause("GC201", "zero-weight", read_op, consumer, reason, notes, {"weight": name})
